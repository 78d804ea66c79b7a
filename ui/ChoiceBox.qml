import QtQuick
import QtQuick.Controls
import Kestrel.Backend

// A drop-down bound to the string setting AppSettings[key]; `choices` is a
// list of {value, text}.
ComboBox {
    id: box
    property string key
    property var choices: []
    width: parent ? parent.width : implicitWidth
    model: choices
    textRole: "text"
    valueRole: "value"
    font.pixelSize: Theme.fontSize
    currentIndex: {
        for (let i = 0; i < choices.length; ++i) if (choices[i].value === AppSettings[key]) return i
        return 0
    }
    onActivated: (i) => { AppSettings[key] = choices[i].value; AppSettings.validate() }
    Accessible.role: Accessible.ComboBox
    Accessible.name: displayText
    contentItem: Text {
        leftPadding: 10
        text: box.displayText
        font: box.font
        color: Theme.text
        verticalAlignment: Text.AlignVCenter
        elide: Text.ElideRight
    }
    background: Rectangle {
        implicitHeight: 34
        radius: Theme.radiusSmall
        color: Theme.surfaceRaised
        border.width: box.visualFocus ? 2 : 1
        border.color: box.visualFocus ? Theme.accent : Theme.border
    }
}
