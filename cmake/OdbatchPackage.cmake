# The installable package: libodbatch.so (every layer but the CUDA parts, its dependencies
# private), the headers a trainer includes, the odbatch CLI, a CMake package and a pkg-config file.
# find_package(odbatch CONFIG) gives odbatch::odbatch and needs no CUDA, even from a build with
# CUDA. Such a build adds the component cuda: libodbatch_cuda.so (the GPU stager and the trainer's
# NCCL communicator, on libodbatch.so), odbatch/cuda.hpp and odbatch-cuda.pc;
# find_package(odbatch CONFIG COMPONENTS cuda) gives odbatch::cuda and looks for CUDAToolkit. In
# the build tree odbatch::odbatch and odbatch::cuda are aliases, so the examples build the same way
# in-tree and against an installed prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(odbatch_generated_include ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in
  ${odbatch_generated_include}/odbatch/version.hpp @ONLY)

# The facade: what a trainer includes (actors/include/odbatch/*.hpp and, with CUDA,
# runtime/cuda/include/odbatch/cuda.hpp). Only these and the headers they include, directly or
# not, are installed (tools/package-check.sh checks that the installed tree is exactly that).
set(odbatch_facade_headers odbatch/batch.hpp odbatch/checkpoint.hpp odbatch/dist_env.hpp
  odbatch/pipeline.hpp odbatch/pipeline_config.hpp odbatch/stage.hpp
  odbatch/trainer_allreduce.hpp odbatch/version.hpp)
set(odbatch_cuda_facade_headers odbatch/cuda.hpp)

# Sets `out_var` to `headers` (include paths such as odbatch/pipeline.hpp) and every odbatch
# header they include, directly or not, each as "include path|file", found in the include
# `roots`. An edit of one of these headers configures the build again, so the list stays whole.
function(odbatch_header_closure out_var roots)
  set(pending ${ARGN})
  set(visited)
  set(closure)
  while(pending)
    list(POP_FRONT pending header)
    if(header IN_LIST visited)
      continue()
    endif()
    list(APPEND visited ${header})
    set(file "")
    foreach(root IN LISTS roots)
      if(EXISTS ${root}/${header})
        set(file ${root}/${header})
        break()
      endif()
    endforeach()
    if(NOT file)
      message(FATAL_ERROR "${header}: in no odbatch include root (${roots})")
    endif()
    list(APPEND closure "${header}|${file}")
    if(NOT file MATCHES "^${PROJECT_BINARY_DIR}/")
      set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${file})
    endif()
    file(STRINGS ${file} include_lines REGEX "^#include \"odbatch/")
    foreach(line IN LISTS include_lines)
      string(REGEX REPLACE "^#include \"([^\"]+)\".*" "\\1" included "${line}")
      list(APPEND pending ${included})
    endforeach()
  endwhile()
  set(${out_var} ${closure} PARENT_SCOPE)
endfunction()

# Installs each "include path|file" of `closure` under include/ at its include path.
function(odbatch_install_headers)
  foreach(entry IN LISTS ARGN)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 header)
    list(GET parts 1 file)
    get_filename_component(header_dir ${header} DIRECTORY)
    install(FILES ${file} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/${header_dir})
  endforeach()
endfunction()

add_library(odbatch_library SHARED ${PROJECT_SOURCE_DIR}/actors/src/library_version.cpp)
target_include_directories(odbatch_library PRIVATE ${odbatch_generated_include})
target_link_libraries(odbatch_library PRIVATE odbatch_warnings)
# Every layer's and subsystem's objects, whole; linking the top layer brings their own
# dependencies along.
set(odbatch_library_parts odbatch_core odbatch_proto_msgs odbatch_log odbatch_source odbatch_text
  odbatch_image odbatch_batch odbatch_stage odbatch_store odbatch_dist odbatch_trainer odbatch_metrics
  odbatch_config odbatch_actors)
set(odbatch_include_roots ${odbatch_generated_include})
foreach(part IN LISTS odbatch_library_parts)
  target_sources(odbatch_library PRIVATE $<TARGET_OBJECTS:${part}>)
  get_target_property(part_source_dir ${part} SOURCE_DIR)
  list(APPEND odbatch_include_roots ${part_source_dir}/include)
endforeach()
target_link_libraries(odbatch_library PRIVATE odbatch_actors)
foreach(include_root IN LISTS odbatch_include_roots)
  target_include_directories(odbatch_library INTERFACE "$<BUILD_INTERFACE:${include_root}>")
endforeach()
target_include_directories(odbatch_library INTERFACE
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_compile_features(odbatch_library INTERFACE cxx_std_20)
set_target_properties(odbatch_library PROPERTIES
  OUTPUT_NAME odbatch
  EXPORT_NAME odbatch
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
add_library(odbatch::odbatch ALIAS odbatch_library)

set(odbatch_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/odbatch)
install(TARGETS odbatch_library EXPORT odbatchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS odbatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(EXPORT odbatchTargets NAMESPACE odbatch:: DESTINATION ${odbatch_cmake_dir})
odbatch_header_closure(odbatch_installed_headers "${odbatch_include_roots}"
  ${odbatch_facade_headers})
odbatch_install_headers(${odbatch_installed_headers})

# The component cuda: the CUDA subsystem's objects in a library of their own on libodbatch.so
# (not its static dependencies, which libodbatch.so holds once), with CUDA's runtime and NCCL in
# its interface: its headers use their types, and the trainer calls NCCL on the communicator.
if(ODBATCH_CUDA_ENABLED)
  add_library(odbatch_cuda_library SHARED $<TARGET_OBJECTS:odbatch_cuda>)
  get_target_property(cuda_source_dir odbatch_cuda SOURCE_DIR)
  target_link_libraries(odbatch_cuda_library PUBLIC odbatch_library CUDA::cudart ${NCCL_LIBRARY})
  target_include_directories(odbatch_cuda_library INTERFACE
    "$<BUILD_INTERFACE:${cuda_source_dir}/include>")
  target_include_directories(odbatch_cuda_library SYSTEM INTERFACE ${NCCL_INCLUDE_DIR})
  set_target_properties(odbatch_cuda_library PROPERTIES
    OUTPUT_NAME odbatch_cuda
    EXPORT_NAME cuda
    LINKER_LANGUAGE CXX
    INSTALL_RPATH "\$ORIGIN"
    VERSION ${PROJECT_VERSION}
    SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
  add_library(odbatch::cuda ALIAS odbatch_cuda_library)

  install(TARGETS odbatch_cuda_library EXPORT odbatchCudaTargets
    LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(EXPORT odbatchCudaTargets NAMESPACE odbatch:: DESTINATION ${odbatch_cmake_dir})
  odbatch_header_closure(odbatch_cuda_headers "${cuda_source_dir}/include;${odbatch_include_roots}"
    ${odbatch_cuda_facade_headers})
  list(REMOVE_ITEM odbatch_cuda_headers ${odbatch_installed_headers})
  odbatch_install_headers(${odbatch_cuda_headers})

  set(odbatch_cuda_pkgconfig_include_dirs ${CUDAToolkit_INCLUDE_DIRS} ${NCCL_INCLUDE_DIR})
  list(REMOVE_DUPLICATES odbatch_cuda_pkgconfig_include_dirs)
  list(TRANSFORM odbatch_cuda_pkgconfig_include_dirs PREPEND "-I")
  list(JOIN odbatch_cuda_pkgconfig_include_dirs " " odbatch_cuda_pkgconfig_cflags)
  get_filename_component(nccl_library_dir ${NCCL_LIBRARY} DIRECTORY)
  set(odbatch_cuda_pkgconfig_libs "-L${CUDAToolkit_LIBRARY_DIR} -lcudart")
  if(NOT nccl_library_dir STREQUAL CUDAToolkit_LIBRARY_DIR)
    string(APPEND odbatch_cuda_pkgconfig_libs " -L${nccl_library_dir}")
  endif()
  string(APPEND odbatch_cuda_pkgconfig_libs " -lnccl")
  configure_file(${PROJECT_SOURCE_DIR}/cmake/odbatch-cuda.pc.in
    ${PROJECT_BINARY_DIR}/odbatch-cuda.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/odbatch-cuda.pc
    DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/odbatchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/odbatchConfig.cmake INSTALL_DESTINATION ${odbatch_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/odbatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/odbatchConfig.cmake
  ${PROJECT_BINARY_DIR}/odbatchConfigVersion.cmake DESTINATION ${odbatch_cmake_dir})
configure_file(${PROJECT_SOURCE_DIR}/cmake/odbatch.pc.in ${PROJECT_BINARY_DIR}/odbatch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/odbatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
