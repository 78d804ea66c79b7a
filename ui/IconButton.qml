import QtQuick
import QtQuick.Controls

// A flat, square button with a tinted SVG icon and a tooltip; the tooltip text
// is also its accessible name.
ToolButton {
    id: control
    property string iconName
    property string tip
    property color tint: Theme.textMuted
    property int size: 32

    implicitWidth: size
    implicitHeight: size
    padding: 0
    focusPolicy: Qt.StrongFocus
    display: AbstractButton.IconOnly
    icon.source: iconName ? "icons/" + iconName + ".svg" : ""
    icon.width: Math.round(size * 0.55)
    icon.height: Math.round(size * 0.55)
    icon.color: enabled ? (hovered ? Theme.text : tint) : Theme.textFaint
    text: tip

    ToolTip.visible: hovered && tip.length > 0
    ToolTip.delay: 600
    ToolTip.text: tip
    Accessible.role: Accessible.Button
    Accessible.name: tip

    background: Rectangle {
        radius: Theme.radiusSmall
        color: control.down ? Theme.selected : (control.hovered ? Theme.hover : "transparent")
        border.width: control.visualFocus ? 2 : 0
        border.color: Theme.accent
    }
}
