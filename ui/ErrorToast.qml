import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// Errors from the engine or the store, shown until dismissed or for 8 seconds.
Rectangle {
    id: toast
    property string message
    visible: message.length > 0
    width: Math.min(parent.width - 80, 620)
    implicitHeight: text.implicitHeight + 24
    radius: Theme.radius
    color: Theme.warningBackground
    border.width: 1
    border.color: Theme.danger
    Accessible.role: Accessible.AlertMessage
    Accessible.name: message

    Connections {
        target: Chat
        function onErrorOccurred(message) { toast.message = message; hide.restart() }
    }
    Timer { id: hide; interval: 8000; onTriggered: toast.message = "" }
    RowLayout {
        anchors.fill: parent
        anchors.margins: 12
        Text {
            id: text
            Layout.fillWidth: true
            text: toast.message
            wrapMode: Text.Wrap
            color: Theme.text
        }
        IconButton {
            size: 26
            iconName: "close"
            tip: qsTr("Dismiss")
            onClicked: toast.message = ""
        }
    }
}
