import QtQuick
import QtQuick.Controls
import Kestrel.Backend

// The model in use, as a small pill; clicking it opens the settings.
AbstractButton {
    id: chip
    focusPolicy: Qt.StrongFocus
    implicitHeight: 28
    implicitWidth: label.implicitWidth + 28
    Accessible.role: Accessible.Button
    Accessible.name: qsTr("Model: %1").arg(label.text)
    ToolTip.visible: hovered
    ToolTip.delay: 600
    ToolTip.text: Chat.modelInfo.path || ""

    readonly property color dot: Chat.modelState === "ready" ? "#3fb950"
                               : Chat.modelState === "loading" ? "#d29922" : Theme.danger
    background: Rectangle {
        radius: height / 2
        color: chip.hovered ? Theme.hover : Theme.surface
        border.width: chip.visualFocus ? 2 : 1
        border.color: chip.visualFocus ? Theme.accent : Theme.border
    }
    contentItem: Item {
        Rectangle {
            x: 10
            anchors.verticalCenter: parent.verticalCenter
            width: 7; height: 7; radius: 3.5
            color: chip.dot
        }
        Text {
            id: label
            x: 22
            anchors.verticalCenter: parent.verticalCenter
            text: Chat.modelState === "none" ? qsTr("No model")
                  : (Chat.modelInfo.name || Chat.modelInfo.fileName || qsTr("Model"))
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
        }
    }
}
