import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Kestrel.Backend

// The system prompt, the chat-template override, language and theme.
ColumnLayout {
    spacing: 12
    component Area: TextArea {
        width: parent ? parent.width : implicitWidth
        wrapMode: TextArea.Wrap
        color: Theme.text
        font.pixelSize: Theme.fontSize
        placeholderTextColor: Theme.textFaint
        selectByMouse: true
        Accessible.role: Accessible.EditableText
        background: Rectangle {
            implicitHeight: 72
            radius: Theme.radiusSmall
            color: Theme.surfaceRaised
            border.width: parent.activeFocus ? 2 : 1
            border.color: parent.activeFocus ? Theme.accent : Theme.border
        }
    }

    SectionTitle { text: qsTr("Conversation") }
    SettingsField {
        Layout.fillWidth: true
        label: qsTr("System prompt")
        key: "systemPrompt"
        Area {
            text: AppSettings.systemPrompt
            placeholderText: qsTr("You are a helpful assistant.")
            Accessible.name: qsTr("System prompt")
            onTextChanged: if (text !== AppSettings.systemPrompt) AppSettings.systemPrompt = text
        }
    }
    SettingsField {
        Layout.fillWidth: true
        label: qsTr("Chat template override")
        hint: qsTr("Empty: the template in the model file (when the file has none, the built-in format its vocabulary fits: Gemma, Llama 3 or ChatML).")
        key: "chatTemplate"
        Area {
            text: AppSettings.chatTemplate
            font.family: Theme.monoFamily
            placeholderText: "{% for message in messages %}…"
            Accessible.name: qsTr("Chat template override")
            onTextChanged: if (text !== AppSettings.chatTemplate) { AppSettings.chatTemplate = text; AppSettings.validate() }
        }
    }

    SectionTitle { text: qsTr("Appearance"); Layout.topMargin: 6 }
    RowLayout {
        Layout.fillWidth: true
        spacing: 16
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Language"); key: "language"
            ChoiceBox {
                key: "language"
                choices: [{ value: "", text: qsTr("System default") },
                          { value: "en", text: "English" },
                          { value: "zh_CN", text: "简体中文" }]
            }
        }
        SettingsField {
            Layout.fillWidth: true; Layout.preferredWidth: 1
            label: qsTr("Theme"); key: "theme"
            ChoiceBox {
                key: "theme"
                choices: [{ value: "system", text: qsTr("Follow the system") },
                          { value: "light", text: qsTr("Light") },
                          { value: "dark", text: qsTr("Dark") }]
            }
        }
    }
}
