import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// The model's reasoning (<think> text), folded unless the user opens it.
ColumnLayout {
    id: root
    property string text
    property bool streaming: false
    property bool open: false
    spacing: 4

    AbstractButton {
        id: toggle
        focusPolicy: Qt.StrongFocus
        implicitHeight: 26
        implicitWidth: label.implicitWidth + 30
        onClicked: root.open = !root.open
        Accessible.role: Accessible.Button
        Accessible.name: label.text
        contentItem: Item {
            Image {
                id: chevron
                anchors.verticalCenter: parent.verticalCenter
                source: "icons/chevron-down.svg"
                sourceSize: Qt.size(14, 14)
                rotation: root.open ? 0 : -90
                opacity: 0.6
            }
            Text {
                id: label
                x: 20
                anchors.verticalCenter: parent.verticalCenter
                text: root.streaming ? qsTr("Thinking…") : qsTr("Reasoning")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                font.italic: true
            }
        }
        background: Rectangle {
            radius: Theme.radiusSmall
            color: toggle.hovered ? Theme.hover : "transparent"
            border.width: toggle.visualFocus ? 2 : 0
            border.color: Theme.accent
        }
    }
    Rectangle {
        visible: root.open
        Layout.fillWidth: true
        implicitHeight: body.implicitHeight + 16
        color: "transparent"
        Rectangle { width: 2; height: parent.height; color: Theme.border }
        TextEdit {
            id: body
            x: 14; y: 8
            width: parent.width - 14
            text: root.text
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            color: Theme.textMuted
            font.pixelSize: Theme.fontSize - 1
        }
    }
}
