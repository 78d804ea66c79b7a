import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// Model loading: a progress bar with a cancel button.
Rectangle {
    visible: Chat.modelState === "loading"
    implicitHeight: visible ? 44 : 0
    color: Theme.accentSoft
    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 20
        anchors.rightMargin: 12
        spacing: 12
        Text {
            text: qsTr("Loading %1…").arg(Chat.modelInfo.fileName || "")
            color: Theme.text
            elide: Text.ElideMiddle
            Layout.maximumWidth: 360
        }
        ProgressBar {
            id: bar
            Layout.fillWidth: true
            from: 0; to: 1
            value: Chat.loadProgress
            Accessible.name: qsTr("Loading progress")
            background: Rectangle { implicitHeight: 6; radius: 3; color: Theme.border }
            contentItem: Item {
                Rectangle {
                    width: bar.visualPosition * parent.width
                    height: parent.height
                    radius: 3
                    color: Theme.accent
                }
            }
        }
        AccentButton {
            text: qsTr("Cancel")
            onClicked: Chat.cancelLoad()
        }
    }
}
