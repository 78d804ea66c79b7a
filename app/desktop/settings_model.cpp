#include "settings_model.h"

#include <QStandardPaths>

#include "engine_types.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QUrl>

namespace kestrel::desktop {

namespace {
const QString kDefaultModelFile = QStringLiteral("SmolLM2-135M-Instruct.Q4_1.gguf");

QString localPath(const QString& pathOrUrl) {
    if (pathOrUrl.startsWith(QLatin1String("file:"))) return QUrl(pathOrUrl).toLocalFile();
    return pathOrUrl;
}
}  // namespace

SettingsModel::SettingsModel(QObject* parent) : QObject(parent), settings_(new QSettings()) { loadAll(); }

SettingsModel::~SettingsModel() { delete settings_; }

QString SettingsModel::defaultModelPath() {
    QString dir = qEnvironmentVariable("KESTREL_MODELS_DIR");
    if (dir.isEmpty()) {
        QString data = qEnvironmentVariable("XDG_DATA_HOME");
        if (data.isEmpty()) data = QDir::homePath() + QStringLiteral("/.local/share");
        dir = data + QStringLiteral("/kestrel/models");
    }
    return dir + QLatin1Char('/') + kDefaultModelFile;
}

QString SettingsModel::appliedModelPath() const {
    return settings_->value(QStringLiteral("app/modelPath"), defaultModelPath()).toString();
}
QString SettingsModel::appliedLanguage() const { return settings_->value(QStringLiteral("app/language")).toString(); }
QString SettingsModel::appliedTheme() const {
    return settings_->value(QStringLiteral("app/theme"), QStringLiteral("system")).toString();
}

QString SettingsModel::groupFor(const QString& path) const {
    // The file name keeps the settings file readable; the hash keeps two
    // models with the same name in different folders apart.
    const QByteArray hash = QCryptographicHash::hash(path.toUtf8(), QCryptographicHash::Sha1).toHex().left(8);
    QString name = QFileInfo(path).fileName();
    name.replace(QRegularExpression(QStringLiteral("[^A-Za-z0-9._-]")), QStringLiteral("_"));
    return QStringLiteral("models/") + name + QLatin1Char('-') + QString::fromLatin1(hash);
}

void SettingsModel::loadModelValues(const QString& path) {
    settings_->beginGroup(groupFor(path));
    draftModelPath_ = settings_->value(QStringLiteral("draftModelPath")).toString();
    device_ = settings_->value(QStringLiteral("device"), QStringLiteral("cpu")).toString();
    kvCache_ = settings_->value(QStringLiteral("kvCache"), QStringLiteral("f16")).toString();
    speculation_ = settings_->value(QStringLiteral("speculation"), QStringLiteral("lookup")).toString();
    contextLength_ = settings_->value(QStringLiteral("contextLength"), 0).toInt();
    temperature_ = settings_->value(QStringLiteral("temperature"), 0.7).toDouble();
    topK_ = settings_->value(QStringLiteral("topK"), 40).toInt();
    topP_ = settings_->value(QStringLiteral("topP"), 0.95).toDouble();
    minP_ = settings_->value(QStringLiteral("minP"), 0.05).toDouble();
    repeatPenalty_ = settings_->value(QStringLiteral("repeatPenalty"), 1.0).toDouble();
    seed_ = settings_->value(QStringLiteral("seed"), QStringLiteral("0")).toString();
    maxTokens_ = settings_->value(QStringLiteral("maxTokens"), 512).toInt();
    systemPrompt_ = settings_->value(QStringLiteral("systemPrompt")).toString();
    chatTemplate_ = settings_->value(QStringLiteral("chatTemplate")).toString();
    settings_->endGroup();
}

void SettingsModel::loadAll() {
    modelPath_ = appliedModelPath();
    language_ = appliedLanguage();
    theme_ = appliedTheme();
    loadModelValues(modelPath_);
    emit modelPathChanged();
    emit modelFileChanged();
    emit edited();
}

void SettingsModel::setModelPath(const QString& pathOrUrl) {
    const QString path = localPath(pathOrUrl);
    if (path == modelPath_) return;
    modelPath_ = path;
    loadModelValues(path);
    emit modelPathChanged();
    emit modelFileChanged();
    emit edited();
    validate();
}

int SettingsModel::trainedContext() const {
    return loadedInfo_.value(QStringLiteral("path")).toString() == modelPath_
               ? loadedInfo_.value(QStringLiteral("trainedContext")).toInt()
               : 0;
}

QVariantMap SettingsModel::modelFile() const {
    QVariantMap out;
    const QFileInfo file(modelPath_);
    out.insert(QStringLiteral("fileName"), file.fileName());
    out.insert(QStringLiteral("exists"), file.isFile());
    out.insert(QStringLiteral("fileBytes"), double(file.size()));
    if (loadedInfo_.value(QStringLiteral("path")).toString() == modelPath_) {
        for (auto it = loadedInfo_.begin(); it != loadedInfo_.end(); ++it) out.insert(it.key(), it.value());
        out.insert(QStringLiteral("loaded"), true);
    } else {
        out.insert(QStringLiteral("loaded"), false);
    }
    return out;
}

void SettingsModel::setLoadedModelInfo(const QVariantMap& info) {
    loadedInfo_ = info;
    emit modelFileChanged();
}

bool SettingsModel::validate() {
    QVariantMap e;
    const QFileInfo model(modelPath_);
    if (modelPath_.isEmpty())
        e[QStringLiteral("modelPath")] = tr("Choose a model file (.gguf).");
    else if (!model.isFile())
        e[QStringLiteral("modelPath")] = tr("%1 does not exist or is not a file.").arg(modelPath_);
    else if (!model.isReadable())
        e[QStringLiteral("modelPath")] = tr("%1 cannot be read; check its permissions.").arg(modelPath_);
    else if (!modelPath_.endsWith(QLatin1String(".gguf"), Qt::CaseInsensitive))
        e[QStringLiteral("modelPath")] = tr("Kestrel reads GGUF models; this file does not end in .gguf.");
    if (!draftModelPath_.isEmpty() && !QFileInfo(localPath(draftModelPath_)).isFile())
        e[QStringLiteral("draftModelPath")] = tr("The draft model %1 does not exist.").arg(draftModelPath_);
    if (device_ != QLatin1String("cpu") && device_ != QLatin1String("cuda") && device_ != QLatin1String("split"))
        e[QStringLiteral("device")] = tr("Choose CPU, one CUDA GPU or several GPUs.");
    if (kvCache_ != QLatin1String("f16") && kvCache_ != QLatin1String("int8"))
        e[QStringLiteral("kvCache")] = tr("Choose 16-bit or 8-bit.");
    if (speculation_ != QLatin1String("lookup") && speculation_ != QLatin1String("draft") &&
        speculation_ != QLatin1String("off"))
        e[QStringLiteral("speculation")] = tr("Choose from the conversation, with the draft model, or off.");
    else if (speculation_ == QLatin1String("draft") && draftModelPath_.isEmpty())
        e[QStringLiteral("speculation")] = tr("Choose a draft model above first.");
    const int trained = trainedContext();
    if (contextLength_ < 0)
        e[QStringLiteral("contextLength")] = tr("Use 0 for the model's default, or a positive number of tokens.");
    else if (contextLength_ > 0 && contextLength_ < 256)
        e[QStringLiteral("contextLength")] = tr("At least 256 tokens are needed for a conversation.");
    else if (trained > 0 && contextLength_ > trained)
        e[QStringLiteral("contextLength")] =
            tr("The model was trained on %1 tokens; a longer context produces garbage. Use %1 or less.").arg(trained);
    if (temperature_ < 0 || temperature_ > 5)
        e[QStringLiteral("temperature")] = tr("Between 0 (always the likeliest token) and 5.");
    if (topK_ < 0 || topK_ > 100000) e[QStringLiteral("topK")] = tr("0 turns top-k off; otherwise up to 100000.");
    if (topP_ <= 0 || topP_ > 1) e[QStringLiteral("topP")] = tr("Above 0 and at most 1 (1 turns top-p off).");
    if (minP_ < 0 || minP_ >= 1) e[QStringLiteral("minP")] = tr("At least 0 (off) and below 1.");
    if (repeatPenalty_ < 0.5 || repeatPenalty_ > 3)
        e[QStringLiteral("repeatPenalty")] = tr("Between 0.5 and 3; 1 turns the penalty off.");
    bool seedOk = true;
    if (!seed_.trimmed().isEmpty()) seed_.trimmed().toULongLong(&seedOk);
    if (!seedOk) e[QStringLiteral("seed")] = tr("A whole number from 0 (a new random seed each reply) up to 2^64-1.");
    if (maxTokens_ == 0 || maxTokens_ < -1)
        e[QStringLiteral("maxTokens")] = tr("A positive number of tokens, or -1 for no limit but the context.");
    else if (trained > 0 && maxTokens_ > qMax(contextLength_, trained))
        e[QStringLiteral("maxTokens")] = tr("A reply cannot be longer than the context (%1 tokens).")
                                             .arg(contextLength_ > 0 ? contextLength_ : trained);
    if (!chatTemplate_.trimmed().isEmpty() && !chatTemplate_.contains(QLatin1String("{{")) &&
        !chatTemplate_.contains(QLatin1String("{%")))
        e[QStringLiteral("chatTemplate")] = tr("This does not look like a Jinja chat template ({{ ... }} / {% ... %}).");
    if (language_ != QString() && language_ != QLatin1String("en") && language_ != QLatin1String("zh_CN"))
        e[QStringLiteral("language")] = tr("Unknown language.");
    if (e != errors_) {
        errors_ = e;
        emit fieldErrorsChanged();
    }
    return errors_.isEmpty();
}

bool SettingsModel::apply() {
    if (!validate()) return false;
    const QString oldLanguage = appliedLanguage();
    settings_->setValue(QStringLiteral("app/modelPath"), modelPath_);
    settings_->setValue(QStringLiteral("app/language"), language_);
    settings_->setValue(QStringLiteral("app/theme"), theme_);
    settings_->beginGroup(groupFor(modelPath_));
    settings_->setValue(QStringLiteral("draftModelPath"), localPath(draftModelPath_));
    settings_->setValue(QStringLiteral("device"), device_);
    settings_->setValue(QStringLiteral("kvCache"), kvCache_);
    settings_->setValue(QStringLiteral("speculation"), speculation_);
    settings_->setValue(QStringLiteral("contextLength"), contextLength_);
    settings_->setValue(QStringLiteral("temperature"), temperature_);
    settings_->setValue(QStringLiteral("topK"), topK_);
    settings_->setValue(QStringLiteral("topP"), topP_);
    settings_->setValue(QStringLiteral("minP"), minP_);
    settings_->setValue(QStringLiteral("repeatPenalty"), repeatPenalty_);
    settings_->setValue(QStringLiteral("seed"), seed_.trimmed().isEmpty() ? QStringLiteral("0") : seed_.trimmed());
    settings_->setValue(QStringLiteral("maxTokens"), maxTokens_);
    settings_->setValue(QStringLiteral("systemPrompt"), systemPrompt_);
    settings_->setValue(QStringLiteral("chatTemplate"), chatTemplate_);
    settings_->endGroup();
    settings_->sync();
    emit applied();
    if (oldLanguage != language_) emit languageChanged(language_);
    return true;
}

void SettingsModel::revert() {
    loadAll();
    if (!errors_.isEmpty()) {
        errors_.clear();
        emit fieldErrorsChanged();
    }
}

void SettingsModel::fillGenerationRequest(GenerationRequest* r) const {
    // The applied values, not the ones being edited in an open dialog.
    settings_->beginGroup(groupFor(appliedModelPath()));
    r->temperature = float(settings_->value(QStringLiteral("temperature"), 0.7).toDouble());
    r->topK = settings_->value(QStringLiteral("topK"), 40).toInt();
    r->topP = float(settings_->value(QStringLiteral("topP"), 0.95).toDouble());
    r->minP = float(settings_->value(QStringLiteral("minP"), 0.05).toDouble());
    r->repeatPenalty = float(settings_->value(QStringLiteral("repeatPenalty"), 1.0).toDouble());
    r->seed = settings_->value(QStringLiteral("seed"), QStringLiteral("0")).toString().toULongLong();
    r->maxTokens = settings_->value(QStringLiteral("maxTokens"), 512).toInt();
    const QString speculation = settings_->value(QStringLiteral("speculation"), QStringLiteral("lookup")).toString();
    r->lookupDraft = speculation == QLatin1String("lookup") ? kLookupDraftTokens : 0;
    r->draftTokens = speculation == QLatin1String("draft") ? kDraftModelTokens : 0;
    settings_->endGroup();
}

QVariantMap SettingsModel::appliedSamplingJson() const {
    GenerationRequest r;
    fillGenerationRequest(&r);
    return {{QStringLiteral("temperature"), r.temperature}, {QStringLiteral("topK"), r.topK},
            {QStringLiteral("topP"), r.topP},               {QStringLiteral("minP"), r.minP},
            {QStringLiteral("repeatPenalty"), r.repeatPenalty}, {QStringLiteral("seed"), QString::number(r.seed)},
            {QStringLiteral("maxTokens"), r.maxTokens}};
}

}  // namespace kestrel::desktop

namespace kestrel::desktop {

QString SettingsModel::appliedSystemPrompt() const {
    return settings_->value(groupFor(appliedModelPath()) + QStringLiteral("/systemPrompt")).toString();
}

ModelLoadRequest SettingsModel::appliedLoadRequest() const {
    ModelLoadRequest r;
    r.path = appliedModelPath();
    const QString group = groupFor(r.path);
    r.device = settings_->value(group + QStringLiteral("/device"), QStringLiteral("cpu")).toString();
    r.kvCache = settings_->value(group + QStringLiteral("/kvCache"), QStringLiteral("f16")).toString();
    r.contextLength = settings_->value(group + QStringLiteral("/contextLength"), 0).toInt();
    r.chatTemplate = settings_->value(group + QStringLiteral("/chatTemplate")).toString();
    r.snapshotDir = QStandardPaths::writableLocation(QStandardPaths::CacheLocation) + QStringLiteral("/kv-snapshots");
    if (settings_->value(group + QStringLiteral("/speculation")).toString() == QLatin1String("draft"))
        r.draftPath = settings_->value(group + QStringLiteral("/draftModelPath")).toString();
    return r;
}

}  // namespace kestrel::desktop
