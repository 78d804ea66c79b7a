# Install rules for the desktop entry and the icon of `kestrel`, included by
# app/desktop/CMakeLists.txt. With the default prefix (/usr/local) or
# -DCMAKE_INSTALL_PREFIX=$HOME/.local, the menu finds Kestrel under Utility/Chat.
include(GNUInstallDirs)
install(FILES ${CMAKE_SOURCE_DIR}/resources/kestrel.desktop DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${CMAKE_SOURCE_DIR}/resources/kestrel.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size 16 24 32 48 64 128 256 512)
  set(png ${CMAKE_SOURCE_DIR}/resources/icons/hicolor/${size}x${size}/apps/kestrel.png)
  if(EXISTS ${png})
    install(FILES ${png} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
  endif()
endforeach()

# Not built by default: regenerates the committed PNGs from the SVG.
add_executable(kestrel-render-icons EXCLUDE_FROM_ALL ${CMAKE_SOURCE_DIR}/packaging/render_icons.cpp)
target_link_libraries(kestrel-render-icons PRIVATE Qt6::Gui Qt6::Svg)
