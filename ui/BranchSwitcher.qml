import QtQuick
import QtQuick.Layouts

// "< 2/3 >": which of the sibling versions of a message is shown.
RowLayout {
    id: root
    property int index: 0
    property int count: 1
    signal move(int delta)
    spacing: 0
    Accessible.role: Accessible.Grouping
    Accessible.name: qsTr("Version %1 of %2").arg(index + 1).arg(count)

    IconButton {
        size: 26
        iconName: "chevron-left"
        tip: qsTr("Previous version")
        enabled: root.index > 0
        onClicked: root.move(-1)
    }
    Text {
        text: qsTr("%1/%2").arg(root.index + 1).arg(root.count)
        color: Theme.textMuted
        font.pixelSize: Theme.fontSizeSmall
    }
    IconButton {
        size: 26
        iconName: "chevron-right"
        tip: qsTr("Next version")
        enabled: root.index < root.count - 1
        onClicked: root.move(1)
    }
}
