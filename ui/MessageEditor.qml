import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

// Editing a message as a new branch: a sent message is sent again with its new
// text; a reply is saved as the user wrote it (then continued, or not).
Rectangle {
    id: root
    property string initialText
    property bool sends: true
    signal saved(string text)
    signal cancelled()

    implicitHeight: layout.implicitHeight + 20
    radius: 14
    color: Theme.surfaceRaised
    border.width: 2
    border.color: Theme.accent
    onVisibleChanged: if (visible) { area.text = initialText; area.forceActiveFocus(); area.cursorPosition = area.length }

    ColumnLayout {
        id: layout
        anchors.fill: parent
        anchors.margins: 10
        TextArea {
            id: area
            objectName: "messageEditorArea"
            Layout.fillWidth: true
            wrapMode: TextArea.Wrap
            color: Theme.text
            font.pixelSize: Theme.fontSize
            background: null
            selectByMouse: true
            Accessible.name: qsTr("Edit message")
            Keys.onReturnPressed: (event) => {
                if (event.modifiers & Qt.ShiftModifier) event.accepted = false
                else root.saved(text)
            }
            Keys.onEscapePressed: root.cancelled()
        }
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Text {
                text: qsTr("The original stays as another branch.")
                color: Theme.textFaint
                font.pixelSize: Theme.fontSizeSmall
                Layout.rightMargin: 8
            }
            AccentButton { text: qsTr("Cancel"); onClicked: root.cancelled() }
            AccentButton {
                text: root.sends ? qsTr("Send") : qsTr("Save")
                primary: true
                enabled: area.text.trim().length > 0
                onClicked: root.saved(area.text)
            }
        }
    }
}
