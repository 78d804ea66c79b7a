import QtQuick
import QtQuick.Layouts
import Kestrel.Backend

// A labelled setting: label (and hint) above, the control, then the
// validation message for `key` from AppSettings.fieldErrors.
ColumnLayout {
    id: root
    property string label
    property string hint
    property string key
    default property alias content: holder.data
    readonly property string error: AppSettings.fieldErrors[key] || ""
    spacing: 4

    Text {
        text: root.label
        color: Theme.text
        font.pixelSize: Theme.fontSize
        font.weight: Font.Medium
    }
    Item {
        id: holder
        Layout.fillWidth: true
        implicitHeight: childrenRect.height
    }
    Text {
        visible: root.error.length > 0 || root.hint.length > 0
        Layout.fillWidth: true
        wrapMode: Text.Wrap
        text: root.error.length > 0 ? root.error : root.hint
        color: root.error.length > 0 ? Theme.danger : Theme.textFaint
        font.pixelSize: Theme.fontSizeSmall
        Accessible.role: root.error.length > 0 ? Accessible.AlertMessage : Accessible.StaticText
        Accessible.name: text
    }
}
