.pragma library
// The visible item under `item` whose text is `text` (a label, or a button's
// text, which IconButton sets to its tooltip), or null. Shared by the view tests.
function findText(item, text) {
    if (item.text === text && item.visible) return item
    for (let i = 0; i < item.children.length; ++i) {
        const found = findText(item.children[i], text)
        if (found) return found
    }
    if (item.contentItem && item.contentItem !== item) return findText(item.contentItem, text)
    return null
}
