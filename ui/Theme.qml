pragma Singleton
import QtQuick
import Kestrel.Backend

// Colors, sizes and fonts of the whole app: one instance, created once.
// Light or dark follows the system unless the settings say otherwise. Qt 6.4
// has no Qt.styleHints.colorScheme, so "the system is dark" means: the system
// palette's window color has a lightness below one half (what KDE, GNOME with
// a dark Qt platform theme and QT_QPA_PLATFORMTHEME palettes report).
QtObject {
    id: theme

    property SystemPalette systemPalette: SystemPalette { colorGroup: SystemPalette.Active }
    readonly property string mode: AppSettings.appliedTheme
    readonly property bool dark: mode === "dark" || (mode !== "light" && systemPalette.window.hslLightness < 0.5)

    // surfaces
    readonly property color background: dark ? "#1c1d20" : "#ffffff"
    readonly property color sidebar: dark ? "#151618" : "#f5f6f8"
    readonly property color surface: dark ? "#26282c" : "#f0f1f4"
    readonly property color surfaceRaised: dark ? "#2e3035" : "#ffffff"
    readonly property color hover: dark ? "#2c2e33" : "#e9ebef"
    readonly property color selected: dark ? "#33363c" : "#e2e5ea"
    readonly property color border: dark ? "#34363c" : "#e1e4e8"
    readonly property color codeBackground: dark ? "#141517" : "#f6f8fa"
    // text
    readonly property color text: dark ? "#e9eaed" : "#1d1f23"
    readonly property color textMuted: dark ? "#9b9fa7" : "#667080"
    readonly property color textFaint: dark ? "#6d717a" : "#9aa1ab"
    // brand: the kestrel's rufous back
    readonly property color accent: dark ? "#ec8a55" : "#c9592a"
    readonly property color accentText: "#ffffff"
    readonly property color accentSoft: dark ? "#3a2a22" : "#fbeee7"
    readonly property color userBubble: dark ? "#2f3137" : "#eef0f3"
    readonly property color danger: dark ? "#ff7b72" : "#c62828"
    readonly property color warningBackground: dark ? "#3b3220" : "#fff6e0"

    // metrics
    readonly property int radius: 10
    readonly property int radiusSmall: 6
    readonly property int spacing: 8
    readonly property int padding: 16
    readonly property int contentWidth: 780
    readonly property int sidebarWidth: 272

    // type
    readonly property int fontSize: 14
    readonly property int fontSizeSmall: 12
    readonly property int fontSizeLarge: 17
    // fontconfig resolves the generic name to the installed monospace face.
    readonly property string monoFamily: "monospace"
}
