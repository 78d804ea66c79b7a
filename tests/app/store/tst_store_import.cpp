// JSON export -> import round trips (lossless: every field, every branch,
// hostile text, a 1 MB message) and hostile import files, which must be
// errors that import nothing, never crashes.
#include "conversation_store.h"
#include "exporter.h"
#include "hostile_text.h"
#include "store_test_util.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QtTest>

using namespace kestrel::store;
using namespace kestrel::store::test;

namespace {

// Compares two snapshots field by field through the id mapping the import
// made (message i of one is message i of the other: both in creation order).
QString differences(const ConversationSnapshot& a, const ConversationSnapshot& b) {
    const Conversation& x = a.conversation;
    const Conversation& y = b.conversation;
    if (x.title != y.title) return QStringLiteral("title");
    if (x.createdAt != y.createdAt) return QStringLiteral("createdAt");
    if (x.updatedAt != y.updatedAt) return QStringLiteral("updatedAt");
    if (x.model != y.model) return QStringLiteral("model");
    if (x.systemPrompt != y.systemPrompt) return QStringLiteral("systemPrompt");
    if (a.messages.size() != b.messages.size()) return QStringLiteral("message count");
    QHash<MessageId, MessageId> map{{0, 0}};
    for (int i = 0; i < a.messages.size(); ++i) map.insert(a.messages[i].id, b.messages[i].id);
    if (map.value(x.activeLeafId, -1) != y.activeLeafId) return QStringLiteral("activeLeafId");
    for (int i = 0; i < a.messages.size(); ++i) {
        const Message& m = a.messages[i];
        const Message& n = b.messages[i];
        const QString at = QStringLiteral("message %1: ").arg(i);
        if (map.value(m.parentId, -1) != n.parentId) return at + QStringLiteral("parentId");
        if (m.role != n.role) return at + QStringLiteral("role");
        if (m.content != n.content) return at + QStringLiteral("content");
        if (m.reasoning != n.reasoning) return at + QStringLiteral("reasoning");
        if (m.createdAt != n.createdAt) return at + QStringLiteral("createdAt");
        if (m.model != n.model) return at + QStringLiteral("model");
        if (m.promptTokens != n.promptTokens) return at + QStringLiteral("promptTokens");
        if (m.completionTokens != n.completionTokens) return at + QStringLiteral("completionTokens");
        if (m.tokensPerSecond != n.tokensPerSecond) return at + QStringLiteral("tokensPerSecond");
        if (m.settings != n.settings) return at + QStringLiteral("settings");
        if (m.state != n.state) return at + QStringLiteral("state");
        if (m.error != n.error) return at + QStringLiteral("error");
    }
    return {};
}

QByteArray withField(QByteArray json, const std::function<void(QJsonObject&)>& edit) {
    QJsonObject root = QJsonDocument::fromJson(json).object();
    edit(root);
    return QJsonDocument(root).toJson(QJsonDocument::Compact);
}

// Edits the first message of the first conversation.
std::function<void(QJsonObject&)> onMessage(int index, const std::function<void(QJsonObject&)>& edit) {
    return [=](QJsonObject& root) {
        QJsonArray convs = root["conversations"].toArray();
        QJsonObject c = convs[0].toObject();
        QJsonArray msgs = c["messages"].toArray();
        QJsonObject m = msgs[index].toObject();
        edit(m);
        msgs[index] = m;
        c["messages"] = msgs;
        convs[0] = c;
        root["conversations"] = convs;
    };
}

}  // namespace

class TestStoreImport : public QObject {
    Q_OBJECT
private slots:
    void initTestCase();
    void roundTripIsLossless();
    void roundTripThroughFile();
    void exportShape();
    void hostileFiles_data();
    void hostileFiles();
    void reordersParentsFirst();
    void corruptedBytesNeverCrash();
    void sizeLimit();

private:
    QTemporaryDir dir_;
    ConversationStore source_;
    ConversationId rich_ = 0, empty_ = 0;
    QByteArray json_;
};

void TestStoreImport::initTestCase() {
    STORE_VERIFY_OK(source_.open(dir_.filePath(QStringLiteral("src.sqlite"))));
    rich_ = *source_.createConversation(hostileText().simplified(), QStringLiteral("SmolLM2 \"135M\""), hostileText());
    NewMessage sys;
    sys.role = MessageRole::System;
    sys.content = QStringLiteral("system text");
    const MessageId s = *source_.addMessage(rich_, 0, sys);
    NewMessage u;
    u.content = hostileText();
    const MessageId q1 = *source_.addMessage(rich_, s, u);
    NewMessage a;
    a.role = MessageRole::Assistant;
    a.content = QString(1 << 20, QLatin1Char('x')) + hostileText();  // a 1 MB reply
    a.reasoning = QString::fromUtf16(u"<think>推理 \u0000 \u202E</think>");
    a.model = QStringLiteral("model/α");
    a.promptTokens = 0;
    a.completionTokens = 1048576;
    a.tokensPerSecond = 1.0 / 3.0;  // not exactly representable in decimal
    a.settings = QJsonObject{{"temperature", 0.7}, {"stop", QJsonArray{"</s>", "\u0000"}}, {"nested", QJsonObject{{"a", 1}}}};
    const MessageId a1 = *source_.addMessage(rich_, q1, a);
    auto regen = source_.beginStreamingReply(rich_, q1, QStringLiteral("other"));
    STORE_VERIFY_OK(source_.appendToStreamingReply(*regen, QStringLiteral("interrupted text")));
    STORE_VERIFY_OK(source_.finishReply(*regen, ReplyStats{5, 2, 10.5}, MessageState::Interrupted));
    auto failed = source_.beginStreamingReply(rich_, q1, QStringLiteral("other"));
    STORE_VERIFY_OK(source_.failReply(*failed, hostileText()));
    u.content = QStringLiteral("edited question");
    const MessageId q1b = *source_.addMessage(rich_, s, u);
    NewMessage tool;
    tool.role = MessageRole::Tool;
    tool.content = QStringLiteral("{\"result\": 42}");
    STORE_VERIFY_OK(source_.addMessage(rich_, q1b, tool));
    STORE_VERIFY_OK(source_.setActiveLeaf(rich_, a1));  // active leaf is not the newest message
    empty_ = *source_.createConversation(QString());
    auto bytes = Exporter(source_).exportToBytes({rich_, empty_}, ExportFormat::Json);
    STORE_VERIFY_OK(bytes);
    json_ = *bytes;
}

void TestStoreImport::roundTripIsLossless() {
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    // Ids in the target are taken already, so the import must remap them.
    for (int i = 0; i < 3; ++i) {
        auto c = target.createConversation(QStringLiteral("existing"));
        NewMessage m;
        m.content = QStringLiteral("existing message");
        STORE_VERIFY_OK(target.addMessage(*c, 0, m));
    }
    auto ids = Importer(target).importBytes(json_);
    STORE_VERIFY_OK(ids);
    QCOMPARE(ids->size(), 2);
    QVERIFY(ids->at(0) != rich_);
    for (int i = 0; i < 2; ++i) {
        auto original = source_.snapshot(i == 0 ? rich_ : empty_);
        auto imported = target.snapshot(ids->at(i));
        STORE_VERIFY_OK(imported);
        const QString diff = differences(*original, *imported);
        QVERIFY2(diff.isEmpty(), qPrintable(QStringLiteral("conversation %1 differs in %2").arg(i).arg(diff)));
    }
    // Branches survive: three replies to the first question, two roots below the system message.
    auto branch = target.activeBranch(ids->at(0));
    QCOMPARE(branch->size(), 3);
    QCOMPARE(target.siblings(branch->at(2).id)->count, 3);
    QCOMPARE(target.siblings(branch->at(1).id)->count, 2);
    QCOMPARE(branch->at(2).content.size(), (1 << 20) + hostileText().size());
    // Imported text is searchable, and a second export is identical but for ids and time.
    QVERIFY(!target.search(QStringLiteral("interrupted text"))->isEmpty());
    QString why;
    QVERIFY2(databaseConsistent(target, &why), qPrintable(why));
    QCOMPARE(queryColumn(target, QStringLiteral("INSERT INTO messages_fts(messages_fts) VALUES('integrity-check')")), QStringList());
}

void TestStoreImport::roundTripThroughFile() {
    const QString path = dir_.filePath(QStringLiteral("all.json"));
    STORE_VERIFY_OK(Exporter(source_).exportToFile({}, ExportFormat::Json, path));
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    auto ids = Importer(target).importFile(path);
    STORE_VERIFY_OK(ids);
    QCOMPARE(ids->size(), source_.listConversations()->size());
    QCOMPARE(Importer(target).importFile(dir_.filePath(QStringLiteral("missing.json"))).error().code(),
             StoreError::Code::NotFound);
}

void TestStoreImport::exportShape() {
    const QJsonObject root = QJsonDocument::fromJson(json_).object();
    QCOMPARE(root["format"].toString(), QStringLiteral("kestrel-conversations"));
    QCOMPARE(root["version"].toInt(), 1);
    QVERIFY(QDateTime::fromString(root["exportedAt"].toString(), Qt::ISODateWithMs).isValid());
    const QJsonObject c = root["conversations"].toArray()[0].toObject();
    for (const char* key : {"id", "title", "createdAt", "updatedAt", "model", "systemPrompt", "activeLeafId", "deletedAt",
                            "messages"})
        QVERIFY2(c.contains(QLatin1String(key)), key);
    const QJsonObject m = c["messages"].toArray()[2].toObject();
    for (const char* key : {"id", "parentId", "role", "content", "reasoning", "createdAt", "model", "promptTokens",
                            "completionTokens", "tokensPerSecond", "settings", "state", "error"})
        QVERIFY2(m.contains(QLatin1String(key)), key);
    QCOMPARE(m["promptTokens"].toInt(-1), 0);
    QVERIFY(c["messages"].toArray()[0].toObject()["parentId"].isNull());
}

void TestStoreImport::hostileFiles_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<int>("code");
    const int invalid = int(StoreError::Code::InvalidFile);
    const QByteArray j = json_;
    QTest::newRow("empty") << QByteArray() << invalid;
    QTest::newRow("not json") << QByteArray("hello, world") << invalid;
    QTest::newRow("binary") << QByteArray("\x00\xff\xfe\x01", 4) << invalid;
    QTest::newRow("truncated") << j.left(j.size() / 2) << invalid;
    QTest::newRow("array") << QByteArray("[1,2,3]") << invalid;
    QTest::newRow("deep nesting") << QByteArray(100000, '[') << invalid;
    QTest::newRow("wrong format") << withField(j, [](QJsonObject& r) { r["format"] = "chatgpt"; }) << invalid;
    QTest::newRow("newer version") << withField(j, [](QJsonObject& r) { r["version"] = 2; }) << int(StoreError::Code::Unsupported);
    QTest::newRow("version string") << withField(j, [](QJsonObject& r) { r["version"] = "1"; }) << invalid;
    QTest::newRow("version fraction") << withField(j, [](QJsonObject& r) { r["version"] = 0.5; }) << invalid;
    QTest::newRow("conversations object") << withField(j, [](QJsonObject& r) { r["conversations"] = QJsonObject(); }) << invalid;
    QTest::newRow("conversation number") << withField(j, [](QJsonObject& r) { r["conversations"] = QJsonArray{1}; }) << invalid;
    QTest::newRow("title number") << withField(j, [](QJsonObject& r) {
        QJsonArray a = r["conversations"].toArray(); QJsonObject c = a[0].toObject(); c["title"] = 5; a[0] = c; r["conversations"] = a;
    }) << invalid;
    QTest::newRow("messages missing") << withField(j, [](QJsonObject& r) {
        QJsonArray a = r["conversations"].toArray(); QJsonObject c = a[0].toObject(); c.remove("messages"); a[0] = c; r["conversations"] = a;
    }) << invalid;
    QTest::newRow("dangling active leaf") << withField(j, [](QJsonObject& r) {
        QJsonArray a = r["conversations"].toArray(); QJsonObject c = a[0].toObject(); c["activeLeafId"] = 999999; a[0] = c; r["conversations"] = a;
    }) << invalid;
    QTest::newRow("id missing") << withField(j, onMessage(0, [](QJsonObject& m) { m.remove("id"); })) << invalid;
    QTest::newRow("id negative") << withField(j, onMessage(0, [](QJsonObject& m) { m["id"] = -3; })) << invalid;
    QTest::newRow("id fraction") << withField(j, onMessage(0, [](QJsonObject& m) { m["id"] = 1.5; })) << invalid;
    QTest::newRow("id huge") << withField(j, onMessage(0, [](QJsonObject& m) { m["id"] = 1e300; })) << invalid;
    QTest::newRow("duplicate id") << withField(j, onMessage(1, [&](QJsonObject& m) {
        m["id"] = QJsonDocument::fromJson(j).object()["conversations"].toArray()[0].toObject()["messages"].toArray()[0].toObject()["id"];
    })) << invalid;
    QTest::newRow("dangling parent") << withField(j, onMessage(1, [](QJsonObject& m) { m["parentId"] = 777777; })) << invalid;
    QTest::newRow("self parent (cycle)") << withField(j, onMessage(0, [](QJsonObject& m) { m["parentId"] = m["id"]; })) << invalid;
    QTest::newRow("root in cycle") << withField(j, onMessage(0, [&](QJsonObject& m) {
        m["parentId"] = QJsonDocument::fromJson(j).object()["conversations"].toArray()[0].toObject()["messages"].toArray()[1].toObject()["id"];
    })) << invalid;
    QTest::newRow("unknown role") << withField(j, onMessage(1, [](QJsonObject& m) { m["role"] = "<script>"; })) << invalid;
    QTest::newRow("content number") << withField(j, onMessage(1, [](QJsonObject& m) { m["content"] = 12; })) << invalid;
    QTest::newRow("content missing") << withField(j, onMessage(1, [](QJsonObject& m) { m.remove("content"); })) << invalid;
    QTest::newRow("settings string") << withField(j, onMessage(1, [](QJsonObject& m) { m["settings"] = "{}"; })) << invalid;
    QTest::newRow("bad time") << withField(j, onMessage(1, [](QJsonObject& m) { m["createdAt"] = "yesterday"; })) << invalid;
    QTest::newRow("negative tokens") << withField(j, onMessage(1, [](QJsonObject& m) { m["promptTokens"] = -5; })) << invalid;
    QTest::newRow("tps string") << withField(j, onMessage(1, [](QJsonObject& m) { m["tokensPerSecond"] = "fast"; })) << invalid;
    QTest::newRow("unknown state") << withField(j, onMessage(1, [](QJsonObject& m) { m["state"] = "done"; })) << invalid;
}

void TestStoreImport::hostileFiles() {
    QFETCH(QByteArray, file);
    QFETCH(int, code);
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    auto result = Importer(target).importBytes(file);
    QVERIFY(!result.isOk());
    QCOMPARE(int(result.error().code()), code);
    QVERIFY(!result.error().message().isEmpty());
    QCOMPARE(target.listConversations()->size(), 0);  // all or nothing
    QCOMPARE(queryValue(target, QStringLiteral("SELECT count(*) FROM messages")), QStringLiteral("0"));
}

void TestStoreImport::reordersParentsFirst() {
    // A hand-made file with a child before its parent and ids out of order.
    const QByteArray file = R"({"format":"kestrel-conversations","version":1,"conversations":[
        {"title":"hand made","activeLeafId":3,"messages":[
          {"id":3,"parentId":10,"role":"assistant","content":"second reply"},
          {"id":10,"parentId":null,"role":"user","content":"question"},
          {"id":2,"parentId":10,"role":"assistant","content":"third reply","state":"streaming"}]}]})";
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    auto ids = Importer(target).importBytes(file);
    STORE_VERIFY_OK(ids);
    auto branch = target.activeBranch(ids->first());
    QCOMPARE(branch->size(), 2);
    QCOMPARE(branch->at(0).content, QStringLiteral("question"));
    QCOMPARE(branch->at(1).content, QStringLiteral("second reply"));
    auto sib = target.siblings(branch->at(1).id);
    QCOMPARE(sib->count, 2);
    QCOMPARE(sib->index, 0);  // file order among siblings is kept
    // Nobody is writing an imported reply.
    QCOMPARE(target.message(sib->ids[1])->state, MessageState::Interrupted);
}

void TestStoreImport::corruptedBytesNeverCrash() {
    // Random damage to a valid export (a small one, so 300 parses stay fast):
    // every result is either a clean import or an error value.
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    auto small = Exporter(source_).exportToBytes({empty_}, ExportFormat::Json);
    NewMessage m;
    const ConversationId c = *source_.createConversation(QStringLiteral("fuzz seed"));
    m.content = QStringLiteral("q");
    const MessageId q = *source_.addMessage(c, 0, m);
    m.role = MessageRole::Assistant;
    m.content = QStringLiteral("a \"quoted\" reply");
    STORE_VERIFY_OK(source_.addMessage(c, q, m));
    small = Exporter(source_).exportToBytes({c}, ExportFormat::Json);
    STORE_VERIFY_OK(small);
    QRandomGenerator rng(20261202);  // fixed seed: reproducible
    int imported = 0, rejected = 0;
    for (int round = 0; round < 300; ++round) {
        QByteArray damaged = *small;
        const int edits = 1 + int(rng.bounded(4));
        for (int e = 0; e < edits; ++e) {
            const int at = int(rng.bounded(damaged.size()));
            switch (rng.bounded(3)) {
            case 0: damaged[at] = char(rng.bounded(256)); break;
            case 1: damaged.remove(at, 1 + int(rng.bounded(8))); break;
            default: damaged.insert(at, "{[\"\\"[rng.bounded(4)]); break;
            }
        }
        auto r = Importer(target).importBytes(damaged);
        (r.isOk() ? imported : rejected) += 1;
        if (!r.isOk()) QVERIFY(!r.error().message().isEmpty());
    }
    qInfo("corrupted exports: %d imported, %d rejected", imported, rejected);
    QVERIFY(rejected > 0);
    QString why;
    QVERIFY2(databaseConsistent(target, &why), qPrintable(why));
}

void TestStoreImport::sizeLimit() {
    QTemporaryDir dir;
    ConversationStore target;
    STORE_VERIFY_OK(target.open(dir.filePath(QStringLiteral("dst.sqlite"))));
    Importer importer(target);
    importer.setMaxFileSize(1024);
    QCOMPARE(importer.importBytes(json_).error().code(), StoreError::Code::InvalidFile);
}

QTEST_APPLESS_MAIN(TestStoreImport)
#include "tst_store_import.moc"
