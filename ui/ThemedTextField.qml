import QtQuick
import QtQuick.Controls

// A single-line field in the app's colors; `invalid` draws a red frame.
TextField {
    id: control
    property bool invalid: false
    color: Theme.text
    placeholderTextColor: Theme.textFaint
    selectionColor: Theme.accent
    selectedTextColor: Theme.accentText
    font.pixelSize: Theme.fontSize
    leftPadding: 10
    rightPadding: 10
    selectByMouse: true
    Accessible.role: Accessible.EditableText
    Accessible.name: placeholderText
    background: Rectangle {
        implicitHeight: 34
        radius: Theme.radiusSmall
        color: Theme.surfaceRaised
        border.width: control.activeFocus || control.invalid ? 2 : 1
        border.color: control.invalid ? Theme.danger : (control.activeFocus ? Theme.accent : Theme.border)
    }
}
