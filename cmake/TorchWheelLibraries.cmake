# A pip-installed torch loads the CUDA libraries of its nvidia-* wheels (libtorch_cuda's RUNPATH names their folders).
# Linking against libtorch_cuda, the linker checks its dependencies too and, left alone, finds the system's copies
# first (CUDA 13.0's NCCL lacks symbols torch 2.15's needs): torch's target points it at the wheels' folders.
# Included by TorchPackage.cmake and by the installed package config, after torch is found.
if(TARGET torch AND TORCH_INSTALL_PREFIX)
  file(GLOB prefix_scorer_torch_wheel_dirs LIST_DIRECTORIES true "${TORCH_INSTALL_PREFIX}/../nvidia/*/lib")
  foreach(dir IN LISTS prefix_scorer_torch_wheel_dirs)
    get_filename_component(dir "${dir}" ABSOLUTE)
    set_property(TARGET torch APPEND PROPERTY INTERFACE_LINK_OPTIONS "LINKER:-rpath-link,${dir}")
  endforeach()
endif()
