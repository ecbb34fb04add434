# write_if_changed(PATH TEXT): writes TEXT to PATH unless PATH holds it
# already, so that what depends on the file is not rebuilt for nothing.
function(write_if_changed path text)
  set(old "")
  if(EXISTS "${path}")
    file(READ "${path}" old)
  endif()
  if(NOT "${old}" STREQUAL "${text}")
    file(WRITE "${path}" "${text}")
  endif()
endfunction()
