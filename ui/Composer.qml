import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// The input box: Enter sends, Shift+Enter starts a new line; the round button
// sends, or stops a reply being written (as Esc does).
ColumnLayout {
    id: root
    spacing: 4
    function focusInput() { input.forceActiveFocus() }
    function submit() {
        if (Chat.send(input.text)) input.clear()
    }

    Rectangle {
        Layout.fillWidth: true
        implicitHeight: Math.min(220, Math.max(52, input.implicitHeight + 18))
        radius: 18
        color: Theme.surfaceRaised
        border.width: input.activeFocus ? 2 : 1
        border.color: input.activeFocus ? Theme.accent : Theme.border

        ScrollView {
            anchors.left: parent.left
            anchors.right: action.left
            anchors.top: parent.top
            anchors.bottom: parent.bottom
            anchors.leftMargin: 8
            anchors.topMargin: 7
            anchors.bottomMargin: 5
            TextArea {
                id: input
                objectName: "composerInput"
                placeholderText: qsTr("Message Kestrel…")
                placeholderTextColor: Theme.textFaint
                wrapMode: TextArea.Wrap
                color: Theme.text
                font.pixelSize: Theme.fontSize
                selectByMouse: true
                selectionColor: Theme.accent
                selectedTextColor: Theme.accentText
                background: null
                Accessible.role: Accessible.EditableText
                Accessible.name: qsTr("Message")
                Keys.onReturnPressed: (event) => {
                    if (event.modifiers & Qt.ShiftModifier) event.accepted = false
                    else root.submit()
                }
                Keys.onEnterPressed: (event) => Keys.returnPressed(event)
            }
        }
        RoundButton {
            id: action
            objectName: "composerAction"
            anchors.right: parent.right
            anchors.bottom: parent.bottom
            anchors.margins: 9
            width: 34
            height: 34
            focusPolicy: Qt.StrongFocus
            enabled: Chat.generating || (input.text.trim().length > 0 && Chat.modelState === "ready")
            icon.source: Chat.generating ? "icons/stop.svg" : "icons/send.svg"
            icon.color: Theme.accentText
            icon.width: 16
            icon.height: 16
            display: AbstractButton.IconOnly
            text: Chat.generating ? qsTr("Stop (Esc)") : qsTr("Send (Enter)")
            Accessible.role: Accessible.Button
            Accessible.name: text
            ToolTip.visible: hovered
            ToolTip.delay: 600
            ToolTip.text: text
            onClicked: Chat.generating ? Chat.stop() : root.submit()
            background: Rectangle {
                radius: width / 2
                color: action.enabled ? (action.down ? Qt.darker(Theme.accent, 1.2) : Theme.accent) : Theme.border
                border.width: action.visualFocus ? 2 : 0
                border.color: Theme.text
            }
        }
    }
    Text {
        Layout.alignment: Qt.AlignHCenter
        text: qsTr("Enter sends · Shift+Enter adds a line · Esc stops")
        color: Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall - 1
    }
}
