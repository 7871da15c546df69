# Sourced by bench/run and bench/callgrind.sh: a benchmark measures only
# the sides it sets up itself, so nothing the caller's environment would
# load or change reaches it. That is every LIVETRACK_* setting (the stack
# memo, fault injection, transparency ... change the figures), a layer
# for the ICD loader, the Level Zero loader's own layers, a CUDA injection,
# and a livetrack front end in LD_PRELOAD (as `livetrack run` leaves them
# for its child).
livetrack_clean_environment() {
  local name
  for name in $(compgen -e); do
    case "$name" in
      LIVETRACK_* | OPENCL_LAYERS | ZE_ENABLE_*LAYER* | CUDA_INJECTION64_PATH) unset "$name" ;;
      LD_PRELOAD) case "$LD_PRELOAD" in *liblivetrack*) unset LD_PRELOAD ;; esac ;;
    esac
  done
}
