import QtQuick
import QtQuick.Layouts

// A reply's text: Markdown prose and fenced code blocks (segments from C++).
ColumnLayout {
    id: root
    property var segments: []
    property bool streaming: false
    spacing: 10

    Repeater {
        model: root.segments
        delegate: Loader {
            required property var modelData
            Layout.fillWidth: true
            sourceComponent: modelData.kind === "code" ? codeComponent : proseComponent
            Component {
                id: proseComponent
                TextEdit {
                    text: modelData.text
                    textFormat: TextEdit.MarkdownText
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.Wrap
                    color: Theme.text
                    font.pixelSize: Theme.fontSize
                    selectionColor: Theme.accent
                    selectedTextColor: Theme.accentText
                    onLinkActivated: (link) => Qt.openUrlExternally(link)
                }
            }
            Component {
                id: codeComponent
                CodeBlock {
                    code: modelData.text
                    language: modelData.language
                }
            }
        }
    }
    // The cursor of a reply still coming in.
    Rectangle {
        visible: root.streaming
        implicitWidth: 8
        implicitHeight: 16
        radius: 2
        color: Theme.accent
        SequentialAnimation on opacity {
            running: root.streaming
            loops: Animation.Infinite
            NumberAnimation { from: 1; to: 0.2; duration: 500 }
            NumberAnimation { from: 0.2; to: 1; duration: 500 }
        }
    }
}
