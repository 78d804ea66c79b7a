import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import Kestrel.Backend

// The model file, its facts, the draft model, the device, the context length, the KV cache's precision
// and speculative decoding.
ColumnLayout {
    spacing: 12
    SectionTitle { text: qsTr("Model") }

    SettingsField {
        Layout.fillWidth: true
        label: qsTr("Model file")
        key: "modelPath"
        RowLayout {
            width: parent.width
            ThemedTextField {
                id: modelPath
                objectName: "modelPathField"
                Layout.fillWidth: true
                text: AppSettings.modelPath
                placeholderText: qsTr("/path/to/model.gguf")
                invalid: (AppSettings.fieldErrors.modelPath || "").length > 0
                onTextEdited: { AppSettings.modelPath = text; AppSettings.validate() }
            }
            AccentButton {
                text: qsTr("Browse…")
                onClicked: { fileDialog.target = "modelPath"; fileDialog.open() }
            }
        }
    }
    ModelInfoCard { Layout.fillWidth: true }

    SettingsField {
        Layout.fillWidth: true
        label: qsTr("Draft model (optional)")
        hint: qsTr("A small model with the same vocabulary (one of the same family) that guesses tokens for the model to check, when speculative decoding is set to use it.")
        key: "draftModelPath"
        RowLayout {
            width: parent.width
            ThemedTextField {
                Layout.fillWidth: true
                text: AppSettings.draftModelPath
                placeholderText: qsTr("None")
                invalid: (AppSettings.fieldErrors.draftModelPath || "").length > 0
                onTextEdited: { AppSettings.draftModelPath = text; AppSettings.validate() }
            }
            AccentButton {
                text: qsTr("Browse…")
                onClicked: { fileDialog.target = "draftModelPath"; fileDialog.open() }
            }
        }
    }

    RowLayout {
        Layout.fillWidth: true
        spacing: 16
        SettingsField {
            Layout.fillWidth: true
            Layout.preferredWidth: 1
            label: qsTr("Device")
            key: "device"
            ChoiceBox {
                key: "device"
                choices: [{ value: "cpu", text: qsTr("CPU") },
                          { value: "cuda", text: qsTr("One CUDA GPU") },
                          { value: "split", text: qsTr("Split across GPUs") }]
            }
        }
        SettingsField {
            Layout.fillWidth: true
            Layout.preferredWidth: 1
            label: qsTr("Context length")
            hint: qsTr("Tokens; 0 uses the trained context (at most 4096).")
            key: "contextLength"
            NumberField { key: "contextLength"; integer: true; objectName: "contextLengthField" }
        }
    }

    RowLayout {
        Layout.fillWidth: true
        spacing: 16
        SettingsField {
            Layout.fillWidth: true
            Layout.preferredWidth: 1
            label: qsTr("KV cache")
            hint: qsTr("8-bit holds 1.8x the context in the same memory and speeds up long chats on the CPU, a little less exactly. CPU only: GPUs keep 16-bit.")
            key: "kvCache"
            ChoiceBox {
                key: "kvCache"
                objectName: "kvCacheBox"
                choices: [{ value: "f16", text: qsTr("16-bit (exact to 1/2048)") },
                          { value: "int8", text: qsTr("8-bit") }]
            }
        }
        SettingsField {
            Layout.fillWidth: true
            Layout.preferredWidth: 1
            label: qsTr("Speculative decoding")
            hint: qsTr("Guesses the next words and checks them in one step: the same replies, in fewer steps. From the conversation: earlier text (code, rewrites, lists). With the draft model: the model above. CPU only for now.")
            key: "speculation"
            ChoiceBox {
                key: "speculation"
                objectName: "speculationBox"
                choices: [{ value: "lookup", text: qsTr("From the conversation") },
                          { value: "draft", text: qsTr("With the draft model") },
                          { value: "off", text: qsTr("Off") }]
            }
        }
    }

    FileDialog {
        id: fileDialog
        property string target
        title: qsTr("Choose a model file")
        nameFilters: [qsTr("GGUF models (*.gguf)"), qsTr("All files (*)")]
        onAccepted: {
            AppSettings[target] = selectedFile.toString()
            AppSettings.validate()
        }
    }
}
