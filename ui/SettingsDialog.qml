import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Kestrel.Backend

// Settings, saved per model: the model file, device, context, sampling, system
// prompt, chat template, language and theme. Apply validates, saves and, when
// the model, device or context changed, reloads the model.
Dialog {
    id: dialog
    objectName: "settingsDialog"
    property string reason
    function openWith(why) {
        reason = why
        open()
    }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 680)
    height: Math.min(parent.height - 60, 760)
    modal: true
    focus: true
    padding: 0
    title: qsTr("Settings")
    onAboutToShow: {
        AppSettings.revert()
        if (reason.length > 0) AppSettings.validate()  // mark what is wrong right away
    }
    onAccepted: reason = ""
    onRejected: AppSettings.revert()

    background: Rectangle {
        radius: 14
        color: Theme.background
        border.width: 1
        border.color: Theme.border
    }
    Overlay.modal: Rectangle { color: Theme.dark ? "#99000000" : "#55000000" }

    header: RowLayout {
        spacing: 8
        Text {
            Layout.fillWidth: true
            Layout.leftMargin: 24
            Layout.topMargin: 18
            Layout.bottomMargin: 6
            text: dialog.title
            color: Theme.text
            font.pixelSize: 20
            font.weight: Font.DemiBold
        }
        IconButton {
            Layout.rightMargin: 14
            Layout.topMargin: 12
            iconName: "close"
            tip: qsTr("Close")
            onClicked: dialog.reject()
        }
    }

    contentItem: ScrollView {
        id: scroll
        clip: true
        contentWidth: availableWidth
        ColumnLayout {
            width: scroll.availableWidth
            spacing: 18
            Rectangle {
                visible: dialog.reason.length > 0
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.topMargin: 8
                implicitHeight: reasonText.implicitHeight + 20
                radius: Theme.radius
                color: Theme.warningBackground
                Text {
                    id: reasonText
                    anchors.fill: parent
                    anchors.margins: 10
                    wrapMode: Text.Wrap
                    text: dialog.reason
                    color: Theme.text
                    Accessible.role: Accessible.AlertMessage
                    Accessible.name: text
                }
            }
            ModelSettings {
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.topMargin: dialog.reason.length > 0 ? 0 : 8
            }
            SamplingSettings {
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
            }
            ConversationSettings {
                Layout.fillWidth: true
                Layout.leftMargin: 24
                Layout.rightMargin: 24
                Layout.bottomMargin: 16
            }
        }
    }

    footer: Rectangle {
        implicitHeight: 64
        color: "transparent"
        Rectangle { width: parent.width; height: 1; color: Theme.border }
        RowLayout {
            anchors.fill: parent
            anchors.leftMargin: 24
            anchors.rightMargin: 24
            spacing: 8
            Text {
                Layout.fillWidth: true
                visible: !AppSettings.valid
                text: qsTr("Fix the fields marked in red to apply.")
                color: Theme.danger
                font.pixelSize: Theme.fontSizeSmall
                elide: Text.ElideRight
            }
            Item { Layout.fillWidth: AppSettings.valid }
            AccentButton {
                text: qsTr("Cancel")
                onClicked: dialog.reject()
            }
            AccentButton {
                objectName: "applyButton"
                text: qsTr("Apply")
                primary: true
                onClicked: if (AppSettings.apply()) dialog.accept()
            }
        }
    }
}
