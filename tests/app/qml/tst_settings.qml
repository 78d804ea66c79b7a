import QtQuick
import QtQuick.Controls
import QtTest
import Kestrel
import Kestrel.Backend

// The settings dialog shows validation messages next to fields and applies
// only valid settings.
Item {
    width: 900; height: 760
    SettingsDialog { id: dialog }

    TestCase {
        name: "Settings"
        when: windowShown

        function type(text) { for (const c of text) keyClick(c) }

        function cleanup() {
            dialog.close()
            AppSettings.revert()  // leave valid, applied settings to the next file
        }

        function test_validationAndApply() {
            dialog.openWith("No model file was found.")
            tryCompare(dialog, "opened", true)
            const temperature = findChild(dialog.contentItem, "temperatureField")
            verify(temperature)
            temperature.forceActiveFocus()
            temperature.selectAll()
            type("9")
            compare(AppSettings.temperature, 9)
            verify(!AppSettings.valid)
            verify(AppSettings.fieldError("temperature").length > 0)
            verify(temperature.invalid)
            const apply = findChild(dialog.footer, "applyButton")
            mouseClick(apply)
            verify(dialog.opened, "an invalid setting keeps the dialog open")
            temperature.forceActiveFocus()
            temperature.selectAll()
            type("0.3")
            verify(AppSettings.valid)
            mouseClick(apply)
            tryCompare(dialog, "opened", false)
            dialog.openWith("")
            tryCompare(dialog, "opened", true)
            compare(findChild(dialog.contentItem, "temperatureField").text, "0.3", "saved and shown again")
            AppSettings.temperature = 0
            AppSettings.apply()
            dialog.close()
        }

        // The KV cache's precision: 16-bit by default, 8-bit chosen from the box, saved per
        // model and shown again when the dialog reopens.
        function test_kvCacheChoice() {
            dialog.openWith("")
            tryCompare(dialog, "opened", true)
            const box = findChild(dialog.contentItem, "kvCacheBox")
            verify(box)
            compare(AppSettings.kvCache, "f16")
            compare(box.currentIndex, 0)
            box.activated(1)
            compare(AppSettings.kvCache, "int8")
            verify(AppSettings.valid)
            mouseClick(findChild(dialog.footer, "applyButton"))
            tryCompare(dialog, "opened", false)
            dialog.openWith("")
            tryCompare(dialog, "opened", true)
            compare(findChild(dialog.contentItem, "kvCacheBox").currentIndex, 1, "saved and shown again")
            AppSettings.kvCache = "f16"
            AppSettings.apply()
        }

        function test_modelPathValidation() {
            dialog.openWith("")
            tryCompare(dialog, "opened", true)
            const path = findChild(dialog.contentItem, "modelPathField")
            const original = path.text
            path.forceActiveFocus()
            path.selectAll()
            type("/nonexistent/model.gguf")
            verify(AppSettings.fieldError("modelPath").indexOf("/nonexistent/model.gguf") >= 0)
            dialog.reject()
            tryCompare(dialog, "opened", false)
            compare(AppSettings.modelPath, original, "cancel drops the edit")
        }
    }
}
