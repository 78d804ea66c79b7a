import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// A fenced code block: monospace, its language, and a copy button.
Rectangle {
    id: root
    property string code
    property string language
    property bool copied: false
    implicitHeight: header.height + codeText.implicitHeight + 20
    radius: Theme.radius
    color: Theme.codeBackground
    border.width: 1
    border.color: Theme.border

    Rectangle {
        id: header
        width: parent.width
        height: 32
        color: "transparent"
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 12
            anchors.rightMargin: 4
            Text {
                Layout.fillWidth: true
                text: root.language.length > 0 ? root.language : qsTr("code")
                color: Theme.textMuted
                font.pixelSize: Theme.fontSizeSmall
                font.family: Theme.monoFamily
            }
            IconButton {
                size: 26
                iconName: root.copied ? "check" : "copy"
                tip: root.copied ? qsTr("Copied") : qsTr("Copy code")
                onClicked: {
                    Chat.copyText(root.code)
                    root.copied = true
                    resetTimer.restart()
                }
            }
        }
        Rectangle { anchors.bottom: parent.bottom; width: parent.width; height: 1; color: Theme.border }
    }
    Timer { id: resetTimer; interval: 1500; onTriggered: root.copied = false }
    TextEdit {
        id: codeText
        anchors.top: header.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.margins: 12
        text: root.code
        readOnly: true
        selectByMouse: true
        wrapMode: TextEdit.WrapAnywhere
        textFormat: TextEdit.PlainText
        font.family: Theme.monoFamily
        font.pixelSize: Theme.fontSize - 1
        color: Theme.text
        selectionColor: Theme.accent
        selectedTextColor: Theme.accentText
        Accessible.role: Accessible.EditableText
        Accessible.name: qsTr("Code")
    }
}
