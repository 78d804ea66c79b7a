import QtQuick

// A heading inside the settings dialog.
Text {
    color: Theme.textMuted
    font.pixelSize: Theme.fontSizeSmall
    font.weight: Font.DemiBold
    font.capitalization: Font.AllUppercase
    font.letterSpacing: 0.8
    Accessible.role: Accessible.Heading
    Accessible.name: text
}
