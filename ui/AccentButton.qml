import QtQuick
import QtQuick.Controls

// A text button; `primary` fills it with the accent color.
Button {
    id: control
    property bool primary: false
    focusPolicy: Qt.StrongFocus
    font.pixelSize: Theme.fontSize
    leftPadding: 16
    rightPadding: 16
    topPadding: 8
    bottomPadding: 8
    Accessible.role: Accessible.Button
    Accessible.name: text

    contentItem: Text {
        text: control.text
        font: control.font
        color: control.primary ? Theme.accentText : Theme.text
        opacity: control.enabled ? 1 : 0.5
        horizontalAlignment: Text.AlignHCenter
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    background: Rectangle {
        implicitHeight: 34
        radius: Theme.radiusSmall
        color: control.primary ? (control.down ? Qt.darker(Theme.accent, 1.15) : Theme.accent)
                               : (control.down ? Theme.selected : (control.hovered ? Theme.hover : Theme.surface))
        border.width: control.visualFocus ? 2 : (control.primary ? 0 : 1)
        border.color: control.visualFocus ? Theme.text : Theme.border
    }
}
