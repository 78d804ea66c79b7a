import QtQuick
import Kestrel.Backend

// A number setting bound to AppSettings[key]. It keeps its own text while the
// user types ("0." is fine), writes every parseable value back and re-reads
// the setting when another model's values are loaded.
ThemedTextField {
    id: field
    property string key
    property bool integer: false
    width: parent ? parent.width : implicitWidth
    invalid: (AppSettings.fieldErrors[key] || "").length > 0 || !acceptableInput
    inputMethodHints: Qt.ImhFormattedNumbersOnly
    validator: RegularExpressionValidator {
        regularExpression: field.integer ? /-?[0-9]{0,9}/ : /-?[0-9]{0,6}([.,][0-9]{0,4})?/
    }
    function reload() { text = String(AppSettings[key]) }
    Component.onCompleted: reload()
    Connections {
        target: AppSettings
        function onModelPathChanged() { field.reload() }
    }
    onTextEdited: {
        const value = field.integer ? parseInt(text) : parseFloat(text.replace(",", "."))
        if (!isNaN(value)) AppSettings[key] = value
        AppSettings.validate()
    }
}
