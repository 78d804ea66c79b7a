import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Kestrel.Backend

// Export the open conversation (or all) as Markdown, JSON, HTML or plain
// text; import conversations from a Kestrel JSON export.
Dialog {
    id: dialog
    property string format: "md"
    property bool all: Chat.currentConversationId <= 0
    property string status
    function openImport() { importDialog.open() }

    parent: Overlay.overlay
    anchors.centerIn: parent
    width: Math.min(parent.width - 80, 460)
    modal: true
    focus: true
    title: qsTr("Export")
    onAboutToShow: { status = ""; all = Chat.currentConversationId <= 0 }
    background: Rectangle { radius: 14; color: Theme.background; border.width: 1; border.color: Theme.border }
    header: Text {
        padding: 22
        bottomPadding: 4
        text: dialog.title
        color: Theme.text
        font.pixelSize: 20
        font.weight: Font.DemiBold
    }

    component Choice: RadioButton {
        id: choice
        property string value
        checked: dialog.format === value
        onToggled: dialog.format = value
        Accessible.name: text
        contentItem: Text {
            leftPadding: choice.indicator.width + 8
            text: choice.text
            color: Theme.text
            verticalAlignment: Text.AlignVCenter
        }
    }

    contentItem: ColumnLayout {
        spacing: 6
        SectionTitle { text: qsTr("Format") }
        Choice { text: qsTr("Markdown (.md)"); value: "md" }
        Choice { text: qsTr("JSON, lossless and re-importable (.json)"); value: "json" }
        Choice { text: qsTr("Web page (.html)"); value: "html" }
        Choice { text: qsTr("Plain text (.txt)"); value: "txt" }
        SectionTitle { text: qsTr("What"); Layout.topMargin: 10 }
        CheckBox {
            id: allBox
            text: qsTr("All conversations")
            checked: dialog.all
            enabled: Chat.currentConversationId > 0
            onToggled: dialog.all = checked
            Accessible.name: text
            contentItem: Text {
                leftPadding: allBox.indicator.width + 8
                text: allBox.text
                color: Theme.text
                verticalAlignment: Text.AlignVCenter
            }
        }
        Text {
            visible: dialog.status.length > 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: dialog.status
            color: Theme.textMuted
        }
    }
    footer: RowLayout {
        spacing: 8
        Item { Layout.fillWidth: true }
        AccentButton { text: qsTr("Cancel"); onClicked: dialog.reject() }
        AccentButton {
            Layout.rightMargin: 22
            Layout.bottomMargin: 18
            text: qsTr("Export…")
            primary: true
            onClicked: saveDialog.open()
        }
    }

    FileDialog {
        id: saveDialog
        fileMode: FileDialog.SaveFile
        title: qsTr("Export to")
        defaultSuffix: dialog.format
        currentFile: "file:///" + Chat.suggestedExportName(dialog.format)
        nameFilters: [dialog.format === "md" ? qsTr("Markdown (*.md)")
                      : dialog.format === "json" ? qsTr("JSON (*.json)")
                      : dialog.format === "html" ? qsTr("Web page (*.html)") : qsTr("Text (*.txt)")]
        onAccepted: {
            if (Chat.exportConversations(dialog.format, selectedFile.toString(), dialog.all)) dialog.accept()
        }
    }
    FileDialog {
        id: importDialog
        fileMode: FileDialog.OpenFile
        title: qsTr("Import conversations")
        nameFilters: [qsTr("Kestrel JSON export (*.json)")]
        onAccepted: Chat.importConversations(selectedFile.toString())
    }
}
