# Writes build_provenance.hpp (cmake/build_provenance.hpp.in) with `git describe` of the sources
# as they are when the build runs, not when CMake last configured. Run by the build as
#   cmake -DSOURCE_DIR=… -DOUTPUT=… -DGIT_EXECUTABLE=… -DCMAKE_BUILD_TYPE=…
#         -DCMAKE_CXX_COMPILER_ID=… -DCMAKE_CXX_COMPILER_VERSION=… -P write_build_provenance.cmake
# configure_file rewrites the header only when its text changes, so an unchanged tree recompiles
# nothing and a new commit or edit recompiles io/build_info.cpp alone.
set(CPM_GIT_DESCRIBE "unknown")
if(GIT_EXECUTABLE AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} describe --always --tags --dirty
                  WORKING_DIRECTORY ${SOURCE_DIR}
                  OUTPUT_VARIABLE describe OUTPUT_STRIP_TRAILING_WHITESPACE
                  ERROR_QUIET RESULT_VARIABLE result)
  if(result EQUAL 0 AND describe)
    set(CPM_GIT_DESCRIBE ${describe})
  endif()
endif()
configure_file(${SOURCE_DIR}/cmake/build_provenance.hpp.in ${OUTPUT} @ONLY)
