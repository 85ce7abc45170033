# The installable package: libodbatch.so (every layer inside, its dependencies private), the
# public headers, the odbatch CLI, a CMake package (find_package(odbatch CONFIG) gives
# odbatch::odbatch) and a pkg-config file. In the build tree odbatch::odbatch is an alias, so the
# examples build the same way in-tree and against an installed prefix.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(odbatch_generated_include ${PROJECT_BINARY_DIR}/generated/include)
configure_file(${PROJECT_SOURCE_DIR}/cmake/version.hpp.in
  ${odbatch_generated_include}/odbatch/version.hpp @ONLY)

add_library(odbatch_library SHARED ${PROJECT_SOURCE_DIR}/actors/src/library_version.cpp)
target_include_directories(odbatch_library PRIVATE ${odbatch_generated_include})
target_link_libraries(odbatch_library PRIVATE odbatch_warnings)
# Every layer's and subsystem's objects, whole; linking the top layer brings their own
# dependencies along.
set(odbatch_library_parts odbatch_core odbatch_proto_msgs odbatch_source odbatch_text
  odbatch_image odbatch_batch odbatch_store odbatch_dist odbatch_trainer odbatch_metrics
  odbatch_config odbatch_actors)
if(ODBATCH_CUDA_ENABLED)
  list(APPEND odbatch_library_parts odbatch_cuda)
endif()
set(odbatch_include_roots)
foreach(part IN LISTS odbatch_library_parts)
  target_sources(odbatch_library PRIVATE $<TARGET_OBJECTS:${part}>)
  get_target_property(part_source_dir ${part} SOURCE_DIR)
  list(APPEND odbatch_include_roots ${part_source_dir}/include)
  target_include_directories(odbatch_library INTERFACE
    "$<BUILD_INTERFACE:${part_source_dir}/include>")
endforeach()
target_link_libraries(odbatch_library PRIVATE odbatch_actors)
if(ODBATCH_CUDA_ENABLED)
  target_link_libraries(odbatch_library PRIVATE odbatch_cuda)
endif()
target_include_directories(odbatch_library INTERFACE
  "$<BUILD_INTERFACE:${odbatch_generated_include}>"
  "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")
target_compile_features(odbatch_library INTERFACE cxx_std_20)
set_target_properties(odbatch_library PROPERTIES
  OUTPUT_NAME odbatch
  EXPORT_NAME odbatch
  VERSION ${PROJECT_VERSION}
  SOVERSION ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR})
add_library(odbatch::odbatch ALIAS odbatch_library)

# The CUDA headers (NCCL bootstrap, staging) need CUDA's and NCCL's headers at the consumer too.
set(ODBATCH_PACKAGE_CUDA ${ODBATCH_CUDA_ENABLED})
if(ODBATCH_CUDA_ENABLED)
  target_link_libraries(odbatch_library INTERFACE CUDA::cudart)
  target_include_directories(odbatch_library SYSTEM INTERFACE
    "$<BUILD_INTERFACE:${NCCL_INCLUDE_DIR}>" "$<INSTALL_INTERFACE:${NCCL_INCLUDE_DIR}>")
  target_compile_definitions(odbatch_library INTERFACE ODBATCH_WITH_NCCL=1)
endif()

install(TARGETS odbatch_library EXPORT odbatchTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS odbatch RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
foreach(include_root IN LISTS odbatch_include_roots)
  install(DIRECTORY ${include_root}/
    DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
    FILES_MATCHING PATTERN "*.hpp")
endforeach()
install(FILES ${odbatch_generated_include}/odbatch/version.hpp
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/odbatch)

set(odbatch_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/odbatch)
install(EXPORT odbatchTargets NAMESPACE odbatch:: DESTINATION ${odbatch_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/odbatchConfig.cmake.in
  ${PROJECT_BINARY_DIR}/odbatchConfig.cmake INSTALL_DESTINATION ${odbatch_cmake_dir})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/odbatchConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/odbatchConfig.cmake
  ${PROJECT_BINARY_DIR}/odbatchConfigVersion.cmake DESTINATION ${odbatch_cmake_dir})

set(odbatch_pkgconfig_cflags "")
if(ODBATCH_CUDA_ENABLED)
  set(odbatch_pkgconfig_cflags "-DODBATCH_WITH_NCCL=1 -I${CUDAToolkit_INCLUDE_DIRS}")
  if(NOT NCCL_INCLUDE_DIR STREQUAL CUDAToolkit_INCLUDE_DIRS)
    string(APPEND odbatch_pkgconfig_cflags " -I${NCCL_INCLUDE_DIR}")
  endif()
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/odbatch.pc.in ${PROJECT_BINARY_DIR}/odbatch.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/odbatch.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
