import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// What an empty chat shows: the logo, a greeting and the model in use.
ColumnLayout {
    spacing: 12
    Image {
        Layout.alignment: Qt.AlignHCenter
        source: "kestrel.svg"
        sourceSize: Qt.size(64, 64)
        opacity: 0.9
        Accessible.ignored: true
    }
    Text {
        Layout.alignment: Qt.AlignHCenter
        text: qsTr("How can I help?")
        color: Theme.text
        font.pixelSize: 24
        font.weight: Font.DemiBold
    }
    Text {
        Layout.alignment: Qt.AlignHCenter
        Layout.maximumWidth: 420
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        color: Theme.textMuted
        text: Chat.modelState === "ready"
              ? qsTr("%1 runs on this computer. Nothing you type leaves it.").arg(Chat.modelInfo.name || Chat.modelInfo.fileName)
              : Chat.modelState === "loading" ? qsTr("Loading the model…")
                                              : qsTr("Choose a model in Settings (Ctrl+,) to start.")
    }
}
