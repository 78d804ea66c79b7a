.pragma library
// Finding items in the view tests. findText: the visible item under `item` whose
// text is `text` (a label, or a button's text, which IconButton sets to its
// tooltip), or null.
function findText(item, text) {
    return findVisible(item, (it) => it.text === text)
}

// The visible item under `item` whose objectName is `name`, or null.
function findNamed(item, name) {
    return findVisible(item, (it) => it.objectName === name)
}

function findVisible(item, matches) {
    if (matches(item) && item.visible) return item
    for (let i = 0; i < item.children.length; ++i) {
        const found = findVisible(item.children[i], matches)
        if (found) return found
    }
    if (item.contentItem && item.contentItem !== item) return findVisible(item.contentItem, matches)
    return null
}
