# Sourced by the scripts: lets mpirun run as root and oversubscribe (CI and
# containers), and avoids the cross-memory-attach copy that containers refuse.
export PATH="$PATH:/usr/local/go/bin"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
