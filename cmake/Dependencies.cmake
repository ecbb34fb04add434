# LLVM/MLIR 15, ONNX's protobuf schema and GoogleTest, all from Debian's packages.
set(MKC_LLVM_ROOT "/usr/lib/llvm-15" CACHE PATH "LLVM/MLIR 15 install prefix")
find_package(MLIR REQUIRED CONFIG PATHS "${MKC_LLVM_ROOT}/lib/cmake/mlir" NO_DEFAULT_PATH)
find_package(LLVM REQUIRED CONFIG PATHS "${MKC_LLVM_ROOT}/lib/cmake/llvm" NO_DEFAULT_PATH)

list(APPEND CMAKE_MODULE_PATH "${MLIR_CMAKE_DIR}" "${LLVM_CMAKE_DIR}")
include(TableGen)
include(AddLLVM)
include(AddMLIR)

include_directories(SYSTEM ${LLVM_INCLUDE_DIRS} ${MLIR_INCLUDE_DIRS})
add_definitions(${LLVM_DEFINITIONS})
if(NOT LLVM_ENABLE_RTTI)
  add_compile_options(-fno-rtti)
endif()

# Debian's MLIR targets link the shared libLLVM-15.so through the imported
# target `LLVM`. Point it at the static support libraries instead, so mkc and
# mk-opt need only libstdc++ and libc and can be copied to another machine.
find_library(MKC_ZLIB_STATIC NAMES libz.a REQUIRED)
find_library(MKC_TINFO_STATIC NAMES libtinfo.a REQUIRED)
get_target_property(_llvm_configs LLVM IMPORTED_CONFIGURATIONS)
foreach(_config ${_llvm_configs} NONE)
  set_property(TARGET LLVM PROPERTY IMPORTED_LOCATION_${_config}
               "${MKC_LLVM_ROOT}/lib/libLLVMSupport.a")
endforeach()
set_property(TARGET LLVM PROPERTY IMPORTED_LOCATION "${MKC_LLVM_ROOT}/lib/libLLVMSupport.a")
set_property(TARGET LLVM PROPERTY INTERFACE_LINK_LIBRARIES
             "${MKC_LLVM_ROOT}/lib/libLLVMDemangle.a;${MKC_ZLIB_STATIC};${MKC_TINFO_STATIC};pthread;dl;m")

# ONNX: Debian's libonnx ships the schema (onnx.proto); generate its C++ here
# and link protobuf statically, for the same reason as above.
set(Protobuf_USE_STATIC_LIBS ON)
find_package(Protobuf REQUIRED)
find_library(MKC_PROTOBUF_SHARED NAMES libprotobuf.so REQUIRED)
find_file(MKC_ONNX_PROTO onnx.proto PATHS /usr/include/onnx NO_DEFAULT_PATH REQUIRED)

find_package(GTest REQUIRED)
find_package(Python3 REQUIRED COMPONENTS Interpreter)

# A static library of the C++ protoc generates from one .proto file.
function(mkc_protobuf_library target proto)
  get_filename_component(dir ${proto} DIRECTORY)
  get_filename_component(stem ${proto} NAME_WE)
  set(out ${CMAKE_CURRENT_BINARY_DIR})
  add_custom_command(
    OUTPUT ${out}/${stem}.pb.cc ${out}/${stem}.pb.h
    COMMAND protobuf::protoc --cpp_out=${out} -I${dir} ${proto}
    DEPENDS ${proto}
    WORKING_DIRECTORY ${out}
    VERBATIM)
  add_library(${target} STATIC ${out}/${stem}.pb.cc)
  target_include_directories(${target} PUBLIC ${out} ${Protobuf_INCLUDE_DIRS})
  # Debian's libprotobuf.a is not position-independent: a shared library
  # (libmkrt.so, which sets MKC_SHARED_PROTOBUF) takes libprotobuf.so, from
  # the same package as the headers; everything else the static one, for the
  # relocatable tools.
  target_link_libraries(${target} PUBLIC
    "$<IF:$<BOOL:$<TARGET_PROPERTY:MKC_SHARED_PROTOBUF>>,${MKC_PROTOBUF_SHARED},${Protobuf_LIBRARIES}>")
endfunction()
