import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// What the chosen model file is: name, architecture, quantization, size,
// trained context and the memory it needs with the context chosen.
Rectangle {
    id: card
    readonly property var info: AppSettings.modelFile
    function bytes(n) {
        if (!n) return "—"
        const units = ["B", "KB", "MB", "GB", "TB"]
        let i = 0
        while (n >= 1024 && i < units.length - 1) { n /= 1024; ++i }
        return n.toFixed(i > 1 ? 1 : 0) + " " + units[i]
    }
    implicitHeight: grid.implicitHeight + 24
    radius: Theme.radius
    color: Theme.surface
    visible: info.exists === true

    GridLayout {
        id: grid
        anchors.fill: parent
        anchors.margins: 12
        columns: 4
        columnSpacing: 16
        rowSpacing: 6
        component Key: Text { color: Theme.textMuted; font.pixelSize: Theme.fontSizeSmall }
        component Value: Text {
            color: Theme.text
            font.pixelSize: Theme.fontSizeSmall
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Key { text: qsTr("Name") }
        Value { text: card.info.name || card.info.fileName || "" }
        Key { text: qsTr("File size") }
        Value { text: card.bytes(card.info.fileBytes) }
        Key { text: qsTr("Architecture"); visible: card.info.loaded === true }
        Value { text: card.info.architecture || ""; visible: card.info.loaded === true }
        Key { text: qsTr("Quantization"); visible: card.info.loaded === true }
        Value { text: card.info.fileType || ""; visible: card.info.loaded === true }
        Key { text: qsTr("Trained context"); visible: card.info.loaded === true }
        Value { text: qsTr("%1 tokens").arg(card.info.trainedContext || 0); visible: card.info.loaded === true }
        Key { text: qsTr("KV cache"); visible: card.info.loaded === true }
        Value {
            visible: card.info.loaded === true
            text: card.info.kvCache === "int8" ? qsTr("8-bit") : qsTr("16-bit")
        }
        Key { text: qsTr("Memory"); visible: card.info.loaded === true }
        Value {
            visible: card.info.loaded === true
            text: qsTr("%1 (%2 tokens)").arg(card.bytes(card.info.memoryBytes)).arg(card.info.contextLength || 0)
        }
        Key { text: qsTr("Draft model"); visible: card.info.loaded === true && (card.info.draftName || "").length > 0 }
        Value {
            objectName: "draftModelName"
            visible: card.info.loaded === true && (card.info.draftName || "").length > 0
            text: card.info.draftName || ""
        }
        Text {
            objectName: "draftModelWarning"
            visible: card.info.loaded === true && (card.info.draftWarning || "").length > 0
            Layout.columnSpan: 4
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            font.pixelSize: Theme.fontSizeSmall
            text: card.info.draftWarning || ""
        }
        Text {
            visible: card.info.loaded === true && Chat.templateWarning.length > 0
            Layout.columnSpan: 4
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            font.pixelSize: Theme.fontSizeSmall
            text: qsTr("Chat template: %1").arg(Chat.templateWarning)
        }
        Text {
            visible: card.info.loaded !== true
            Layout.columnSpan: 4
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.textFaint
            font.pixelSize: Theme.fontSizeSmall
            text: qsTr("Architecture, quantization, trained context and memory appear once the model is loaded (Apply).")
        }
    }
}
