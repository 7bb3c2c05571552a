# The installed package, end to end: `cmake --install` of the build into a scratch prefix, the
# files a user expects there, then tests/install/consumer (a separate CMake project) configured
# with find_package(cpm CONFIG REQUIRED), built and run, and the installed `cpm --version`.
#
#   cmake -DCPM_BUILD_DIR=<build> -DCONSUMER_SOURCE=<consumer> -DSCRATCH=<folder>
#         [-DCONFIG=<config>] [-DCXX=<compiler>] -P install_and_consume.cmake
cmake_minimum_required(VERSION 3.22)
foreach(variable CPM_BUILD_DIR CONSUMER_SOURCE SCRATCH)
  if(NOT DEFINED ${variable})
    message(FATAL_ERROR "install_and_consume.cmake: -D${variable}=... is required")
  endif()
endforeach()

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "${what} failed (${result}):\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(prefix ${SCRATCH}/prefix)
file(REMOVE_RECURSE ${SCRATCH})
set(config_option)
if(CONFIG)
  set(config_option --config ${CONFIG})
endif()
run_step("cmake --install" ${CMAKE_COMMAND} --install ${CPM_BUILD_DIR} --prefix ${prefix}
         ${config_option})

foreach(file bin/cpm include/cpm/core/particles.hpp include/cpm/io/h5md_writer.hpp
             include/cpm/cpm_version.hpp share/cpm/examples/default.toml
             share/cpm/render_last_frame.py share/cpm/python/cpm_reader.py)
  if(NOT EXISTS ${prefix}/${file})
    message(FATAL_ERROR "the installation lacks ${file}")
  endif()
endforeach()
file(GLOB_RECURSE archives ${prefix}/lib*/libcpm.a)
file(GLOB_RECURSE configs ${prefix}/lib*/cpmConfig.cmake)
file(GLOB_RECURSE versions ${prefix}/lib*/cpmConfigVersion.cmake)
if(NOT archives OR NOT configs OR NOT versions)
  message(FATAL_ERROR "the installation lacks libcpm.a or the CMake package files")
endif()
# No path into the source or build tree may leak into the installed package.
file(GLOB installed_cmake ${prefix}/lib*/cmake/cpm/*.cmake)
foreach(file ${installed_cmake})
  file(READ ${file} text)
  foreach(tree ${CPM_BUILD_DIR} ${CONSUMER_SOURCE}/../../..)
    get_filename_component(tree ${tree} REALPATH)
    string(FIND "${text}" "${tree}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} refers to ${tree}")
    endif()
  endforeach()
endforeach()

set(compiler_option)
if(CXX)
  set(compiler_option -DCMAKE_CXX_COMPILER=${CXX})
endif()
run_step("configuring the consumer" ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${SCRATCH}/consumer
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release
         -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON ${compiler_option})
run_step("building the consumer" ${CMAKE_COMMAND} --build ${SCRATCH}/consumer)
run_step("running the consumer" ${SCRATCH}/consumer/consumer)
string(FIND "${step_output}" "consumer ok" ok)
if(ok EQUAL -1)
  message(FATAL_ERROR "the consumer did not report success:\n${step_output}")
endif()
message(STATUS "${step_output}")
run_step("the installed cpm --version" ${prefix}/bin/cpm --version)
message(STATUS "${step_output}")
file(REMOVE_RECURSE ${SCRATCH})
