import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// How the next token is chosen.
ColumnLayout {
    spacing: 12
    SectionTitle { text: qsTr("Sampling") }
    GridLayout {
        Layout.fillWidth: true
        columns: 2
        columnSpacing: 16
        rowSpacing: 12
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Temperature"); key: "temperature"
            hint: qsTr("0 always picks the likeliest token.")
            NumberField { key: "temperature"; objectName: "temperatureField" }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Max tokens"); key: "maxTokens"
            hint: qsTr("-1: until the context is full.")
            NumberField { key: "maxTokens"; integer: true }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Top-k"); key: "topK"
            NumberField { key: "topK"; integer: true }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Top-p"); key: "topP"
            NumberField { key: "topP" }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Min-p"); key: "minP"
            NumberField { key: "minP" }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Repeat penalty"); key: "repeatPenalty"
            NumberField { key: "repeatPenalty" }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Seed"); key: "seed"
            hint: qsTr("0: a new random seed for every reply.")
            ThemedTextField {
                width: parent.width
                text: AppSettings.seed
                invalid: (AppSettings.fieldErrors.seed || "").length > 0
                onTextEdited: { AppSettings.seed = text; AppSettings.validate() }
            }
        }
    }
}
