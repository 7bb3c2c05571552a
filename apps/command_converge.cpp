// `cpm converge CONFIG.toml`: particles against the PDE as N grows, replicas per N;
// `mpirun -np K cpm converge CONFIG.toml` spreads the replicas over K ranks.
#include <memory>

#include "apps/commands.hpp"
#include "experiments/studies/convergence_study.hpp"

namespace cpm::app {

Command converge_command() {
  auto flags = std::make_shared<ResultFlags>();
  return {"converge", "convergence of the particle system to the McKean-Vlasov PDE as N grows",
          result_arguments(*flags, "continue from the replicas.checkpoint a stopped study wrote"),
          [flags] {
            ConvergenceConfig config = load_convergence_config(flags->config);
            if (!flags->output.empty()) config.model.output.directory = flags->output;
            const MpiEnvironment mpi;
            run_convergence_study(mpi, config, flags->resolved());
          }};
}

}  // namespace cpm::app
