# Installs the built bloomkv into a scratch prefix, then builds and runs a tiny
# application against it twice: with find_package(bloomkv) and with
# pkg-config, as C++17. Fails if either the package or the .pc file is broken.
file(REMOVE_RECURSE ${WORK_DIR})
set(PREFIX ${WORK_DIR}/prefix)

function(run_step)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGV}\n${out}\n${err}")
  endif()
endfunction()

run_step(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})

# The tools, when built, are installed too, and say which version they are.
foreach(tool kvtool shortlinkd)
  if(EXISTS ${BUILD_DIR}/tools/${tool}/${tool})
    if(NOT EXISTS ${PREFIX}/bin/${tool})
      message(FATAL_ERROR "cmake --install did not install ${tool}")
    endif()
  endif()
endforeach()
if(EXISTS ${PREFIX}/bin/shortlinkd)
  execute_process(COMMAND ${PREFIX}/bin/shortlinkd --version
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "^shortlinkd [0-9]+\\.[0-9]+\\.[0-9]+")
    message(FATAL_ERROR "shortlinkd --version: exit ${rc}: ${out}${err}")
  endif()
endif()

# A sanitizer build of the library needs the sanitizer runtime in the app.
set(EXTRA_FLAGS "")
if(SANITIZE)
  set(EXTRA_FLAGS "-fsanitize=${SANITIZE}")
endif()

# 1. CMake package.
run_step(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
         -B ${WORK_DIR}/cmake-build -DCMAKE_PREFIX_PATH=${PREFIX}
         -DCMAKE_BUILD_TYPE=${CMAKE_BUILD_TYPE}
         "-DCMAKE_CXX_FLAGS=${EXTRA_FLAGS}")
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/cmake-build)
run_step(${WORK_DIR}/cmake-build/consumer ${WORK_DIR}/db-cmake)

# 2. pkg-config: a shared library needs no --static (its dependencies are
# linked into it); a static one lists them through --static.
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${PREFIX}/lib/pkgconfig:${PREFIX}/lib/x86_64-linux-gnu/pkgconfig)
set(PC_ARGS --cflags --libs)
if(NOT SHARED)
  list(APPEND PC_ARGS --static)
endif()
execute_process(COMMAND ${PKG_CONFIG} ${PC_ARGS} bloomkv
                OUTPUT_VARIABLE flags RESULT_VARIABLE rc OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config cannot find bloomkv")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
find_program(CXX NAMES c++ g++ REQUIRED)
run_step(${CXX} -std=c++17 ${EXTRA_FLAGS} ${SOURCE_DIR}/tests/install/consumer/main.cc
         -o ${WORK_DIR}/consumer-pc ${flags})
file(GLOB PC_LIBDIRS ${PREFIX}/lib ${PREFIX}/lib/*-linux-gnu)
string(JOIN ":" PC_LIBPATH ${PC_LIBDIRS})
run_step(${CMAKE_COMMAND} -E env LD_LIBRARY_PATH=${PC_LIBPATH}
         ${WORK_DIR}/consumer-pc ${WORK_DIR}/db-pc)
message(STATUS "installed package and pkg-config file both work")
