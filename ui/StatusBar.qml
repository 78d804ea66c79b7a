import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// Live generation speed and how much of the context the conversation uses.
Rectangle {
    implicitHeight: 28
    color: Theme.background
    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 20
        anchors.rightMargin: 20
        spacing: 16
        Text {
            Layout.fillWidth: true
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall
            elide: Text.ElideRight
            text: Chat.generating ? qsTr("Generating… Esc stops") : (Chat.modelInfo.backend || "")
        }
        Text {
            visible: Chat.tokensPerSecond > 0
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            text: qsTr("%1 tok/s").arg(Chat.tokensPerSecond.toFixed(1))
            Accessible.role: Accessible.StaticText
            Accessible.name: text
        }
        Rectangle {
            visible: Chat.contextLength > 0
            implicitWidth: 80
            implicitHeight: 4
            radius: 2
            color: Theme.border
            Rectangle {
                width: parent.width * Math.min(1, Chat.contextUsed / Math.max(1, Chat.contextLength))
                height: parent.height
                radius: 2
                color: Chat.contextUsed > 0.9 * Chat.contextLength ? Theme.danger : Theme.accent
            }
        }
        Text {
            visible: Chat.contextLength > 0
            color: Theme.textMuted
            font.pixelSize: Theme.fontSizeSmall
            text: qsTr("context %1 / %2").arg(Chat.contextUsed).arg(Chat.contextLength)
            Accessible.role: Accessible.StaticText
            Accessible.name: text
        }
    }
}
