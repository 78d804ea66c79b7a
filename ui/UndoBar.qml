import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// "Conversation deleted — Undo", for the few seconds before the delete is final.
Rectangle {
    visible: Chat.pendingUndoTitle.length > 0
    implicitWidth: row.implicitWidth + 24
    implicitHeight: 44
    radius: Theme.radius
    color: Theme.dark ? "#e9eaed" : "#24262b"
    Accessible.role: Accessible.AlertMessage
    Accessible.name: message.text
    RowLayout {
        id: row
        anchors.centerIn: parent
        spacing: 12
        Text {
            id: message
            text: qsTr("Deleted “%1”").arg(Chat.pendingUndoTitle)
            color: Theme.dark ? "#1d1f23" : "#ffffff"
            elide: Text.ElideRight
            Layout.maximumWidth: 360
        }
        AccentButton {
            text: qsTr("Undo")
            primary: true
            onClicked: Chat.undoDelete()
        }
    }
}
