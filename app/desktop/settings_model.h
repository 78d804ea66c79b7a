// SettingsModel: what the settings dialog edits, saved per model in QSettings.
//
// The properties hold the values being edited. Choosing another model file
// (modelPath) loads that model's saved values (or the defaults). apply()
// validates every field, and only when all are valid saves them and emits
// applied(); revert() drops the edits. fieldErrors maps a field name to a
// message the user can act on ("The model was trained on 8192 tokens; ...").
//
// UI thread only. Keys: "app/modelPath", "app/language", "app/theme" and
// "models/<file name>-<hash of the path>/<field>".
#pragma once

#include <QObject>
#include <QString>
#include <QVariantMap>

class QSettings;

namespace kestrel::desktop {

struct GenerationRequest;
struct ModelLoadRequest;

class SettingsModel : public QObject {
    Q_OBJECT
    Q_PROPERTY(QString modelPath READ modelPath WRITE setModelPath NOTIFY modelPathChanged)
    Q_PROPERTY(QString draftModelPath MEMBER draftModelPath_ NOTIFY edited)
    Q_PROPERTY(QString device MEMBER device_ NOTIFY edited)
    Q_PROPERTY(QString kvCache MEMBER kvCache_ NOTIFY edited)  // "f16", "int8" (CPU only)
    // "lookup" (tokens guessed from the conversation, checked in one step: GenerateParams::lookupDraft),
    // "draft" (guessed by the draft model: GenerateParams::draft), "off"
    Q_PROPERTY(QString speculation MEMBER speculation_ NOTIFY edited)
    Q_PROPERTY(int contextLength MEMBER contextLength_ NOTIFY edited)
    Q_PROPERTY(double temperature MEMBER temperature_ NOTIFY edited)
    Q_PROPERTY(int topK MEMBER topK_ NOTIFY edited)
    Q_PROPERTY(double topP MEMBER topP_ NOTIFY edited)
    Q_PROPERTY(double minP MEMBER minP_ NOTIFY edited)
    Q_PROPERTY(double repeatPenalty MEMBER repeatPenalty_ NOTIFY edited)
    Q_PROPERTY(QString seed MEMBER seed_ NOTIFY edited)  // text: "0" or empty is random; a 64-bit value otherwise
    Q_PROPERTY(int maxTokens MEMBER maxTokens_ NOTIFY edited)
    Q_PROPERTY(QString systemPrompt MEMBER systemPrompt_ NOTIFY edited)
    Q_PROPERTY(QString chatTemplate MEMBER chatTemplate_ NOTIFY edited)
    Q_PROPERTY(QString language MEMBER language_ NOTIFY edited)  // "" (system), "en", "zh_CN"
    Q_PROPERTY(QString theme MEMBER theme_ NOTIFY edited)        // "system", "light", "dark"
    Q_PROPERTY(QString appliedTheme READ appliedTheme NOTIFY applied)
    Q_PROPERTY(QVariantMap fieldErrors READ fieldErrors NOTIFY fieldErrorsChanged)
    Q_PROPERTY(bool valid READ valid NOTIFY fieldErrorsChanged)
    Q_PROPERTY(int trainedContext READ trainedContext NOTIFY modelFileChanged)
    Q_PROPERTY(QVariantMap modelFile READ modelFile NOTIFY modelFileChanged)

public:
    explicit SettingsModel(QObject* parent = nullptr);
    ~SettingsModel() override;

    QString modelPath() const { return modelPath_; }
    void setModelPath(const QString& pathOrUrl);
    QString appliedModelPath() const;
    QString appliedLanguage() const;
    QString appliedTheme() const;
    QString device() const { return device_; }
    int contextLength() const { return contextLength_; }
    QString systemPrompt() const { return systemPrompt_; }
    QVariantMap fieldErrors() const { return errors_; }
    bool valid() const { return errors_.isEmpty(); }
    int trainedContext() const;
    // File facts for the dialog: name, size and, once the model was loaded,
    // what the engine reported (architecture, quant type, trained context, memory).
    QVariantMap modelFile() const;

    // The controller reports what the engine found in a loaded file.
    void setLoadedModelInfo(const QVariantMap& info);
    // Sampling values of the applied settings, for the next reply.
    void fillGenerationRequest(GenerationRequest* request) const;
    QVariantMap appliedSamplingJson() const;
    QString appliedSystemPrompt() const;
    // Path, device, KV cache precision and context length of the applied settings.
    ModelLoadRequest appliedLoadRequest() const;

    Q_INVOKABLE bool validate();
    Q_INVOKABLE bool apply();
    Q_INVOKABLE void revert();
    Q_INVOKABLE QString fieldError(const QString& field) const { return errors_.value(field).toString(); }
    // Where the set-up puts the default model ($KESTREL_MODELS_DIR or the XDG data dir).
    static QString defaultModelPath();

signals:
    void modelPathChanged();
    void edited();
    void fieldErrorsChanged();
    void modelFileChanged();
    void applied();
    void languageChanged(const QString& language);

private:
    QString groupFor(const QString& path) const;
    void loadModelValues(const QString& path);
    void loadAll();

    QSettings* settings_;
    QString modelPath_, draftModelPath_, device_, kvCache_, speculation_, seed_, systemPrompt_, chatTemplate_, language_, theme_;
    int contextLength_ = 0, topK_ = 40, maxTokens_ = 512;
    double temperature_ = 0.7, topP_ = 0.95, minP_ = 0.05, repeatPenalty_ = 1.0;
    QVariantMap errors_;
    QVariantMap loadedInfo_;
};

}  // namespace kestrel::desktop
