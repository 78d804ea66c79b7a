import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// The main window: conversations on the left, the chat on the right.
ApplicationWindow {
    id: window
    width: 1120
    height: 740
    minimumWidth: 680
    minimumHeight: 440
    visible: true
    color: Theme.background
    title: Chat.currentConversationId > 0 ? qsTr("%1 — Kestrel").arg(Chat.currentTitle) : qsTr("Kestrel")
    font.pixelSize: Theme.fontSize
    // Popups and menus of the Basic style read the palette: give them the theme.
    palette.window: Theme.background
    palette.windowText: Theme.text
    palette.base: Theme.surfaceRaised
    palette.text: Theme.text
    palette.button: Theme.surface
    palette.buttonText: Theme.text
    palette.highlight: Theme.accent
    palette.highlightedText: Theme.accentText
    palette.toolTipBase: Theme.surfaceRaised
    palette.toolTipText: Theme.text
    palette.placeholderText: Theme.textFaint
    palette.mid: Theme.border
    palette.light: Theme.surfaceRaised
    palette.dark: Theme.textMuted

    function openSettings() { settingsDialog.openWith("") }
    function closeSettings() { settingsDialog.close() }
    function openExport() { exportDialog.open() }
    function newChat() {
        Chat.newConversation()
        chatView.focusInput()
    }

    Shortcut { sequence: "Ctrl+N"; context: Qt.ApplicationShortcut; onActivated: window.newChat() }
    Shortcut { sequence: "Ctrl+F"; context: Qt.ApplicationShortcut; onActivated: sidebar.focusSearch() }
    Shortcut { sequence: "Ctrl+,"; context: Qt.ApplicationShortcut; onActivated: window.openSettings() }
    Shortcut { sequence: "Ctrl+E"; context: Qt.ApplicationShortcut; onActivated: window.openExport() }
    Shortcut {
        sequence: "Esc"
        enabled: Chat.generating
        context: Qt.ApplicationShortcut
        onActivated: Chat.stop()
    }

    RowLayout {
        anchors.fill: parent
        spacing: 0

        Sidebar {
            id: sidebar
            Layout.preferredWidth: Theme.sidebarWidth
            Layout.fillHeight: true
            onNewChatRequested: window.newChat()
            onSettingsRequested: window.openSettings()
            onImportRequested: exportDialog.openImport()
            onConversationChosen: chatView.focusInput()
        }
        Rectangle {
            Layout.fillHeight: true
            implicitWidth: 1
            color: Theme.border
        }
        ChatView {
            id: chatView
            Layout.fillWidth: true
            Layout.fillHeight: true
            onExportRequested: window.openExport()
            onSettingsRequested: window.openSettings()
        }
    }

    UndoBar {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.bottom: parent.bottom
        anchors.bottomMargin: 96
    }
    ErrorToast {
        anchors.horizontalCenter: parent.horizontalCenter
        anchors.top: parent.top
        anchors.topMargin: 64
    }

    SettingsDialog { id: settingsDialog }
    ExportDialog { id: exportDialog }

    Connections {
        target: Chat
        function onNeedsModel(reason) { settingsDialog.openWith(reason) }
    }
    Component.onCompleted: chatView.focusInput()
}
