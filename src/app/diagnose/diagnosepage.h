#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/tuning/hostprobe.h"

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <optional>

class QAction;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTableView;
class QTextBrowser;
class QTreeView;

namespace moetune {

class Banner;
class DiagnosisRunner;
class EvidenceModel;
class FindingsModel;
class LogEdit;
class TargetFieldsModel;

// Paste or open a server log, see what it says about the MoE kernel configs, and what to do.
class DiagnosePage : public QWidget {
    Q_OBJECT
public:
    // Files above this are diagnosed from disk and only previewed (read-only) in the log view.
    static constexpr qint64 previewBytes = 4 * 1024 * 1024;
    // Text above this shows the progress bar at once (smaller jobs show it only if they take a while).
    static constexpr qint64 bigTextBytes = 10 * 1024 * 1024;
    // Text goes into the log view in chunks of this many characters, one per event-loop turn.
    static constexpr qsizetype loadChunkChars = 256 * 1024;

    explicit DiagnosePage(QWidget *parent = nullptr);
    ~DiagnosePage() override;

    // Loads a log file: small ones into the editor, big ones as a preview; diagnoses it on a worker.
    // false (and an inline error) when it cannot be read.
    bool openFile(const QString &path);
    // Replaces the log text (not a paste: no undo entry) and diagnoses it.
    void setLogText(const QString &text);
    // A paste too big for the editor to take at once: diagnosed at once, shown by chunks.
    void pasteLargeText(const QString &text);
    // True while a big text is still going into the log view (it is read-only meanwhile).
    bool isLoading() const;
    // The bundled demo log, diagnosed.
    bool loadDemo();
    // The log came from a host (Hosts page): every diagnosis from now on is merged with the host's probe
    // (mergeHostProbe) and the source label names the host. An empty label clears it; opening another
    // file, the demo or clearing the log clears it too.
    void setHostContext(const QString &hostLabel, const std::optional<HostProbe> &probe);
    QString hostLabel() const { return m_hostLabel; }
    // A log fetched from hostLabel: opened like openFile() and diagnosed with the probe merged.
    bool openFetchedLog(const QString &path, const QString &hostLabel, const HostProbe &probe);
    void clearLog();
    void diagnoseNow();
    void cancelDiagnosis();

    bool copyFindingMarkdown();
    void copyDiagnosisMarkdown();

    const Diagnosis &diagnosis() const;
    bool isBusy() const;
    bool isPreview() const { return m_preview; }
    bool isDemo() const { return m_demo; }
    QString currentFile() const { return m_filePath; }
    QString countsText() const;
    QString summaryText() const;
    QString errorText() const;
    int currentFindingRow() const;
    void selectFinding(int row);
    // Shows line (1-based, logical log) in the log view; false when it is not in the loaded text.
    bool showLogLine(qint64 line, const QString &expectedText = {});

    LogEdit *logEdit() const { return m_logEdit; }
    QTreeView *findingsView() const { return m_findingsView; }
    QTableView *evidenceView() const { return m_evidenceView; }
    QTableView *targetView() const { return m_targetView; }
    QTextBrowser *detailsBrowser() const { return m_details; }
    FindingsModel *findingsModel() const { return m_findingsModel; }
    EvidenceModel *evidenceModel() const { return m_evidenceModel; }
    TargetFieldsModel *targetModel() const { return m_targetModel; }
    QProgressBar *progressBar() const { return m_progress; }
    QPushButton *cancelButton() const { return m_cancelButton; }
    DiagnosisRunner *runner() const { return m_runner; }
    QAction *diagnoseAction() const { return m_diagnoseAction; }
    QAction *copyFindingAction() const { return m_copyFindingAction; }
    QAction *copyDiagnosisAction() const { return m_copyDiagnosisAction; }

    QByteArray saveState() const;
    void restoreState(const QByteArray &state);

signals:
    void fileOpened(const QString &path);
    void diagnosisFinished();
    void logLoaded(); // a text loaded by chunks is complete in the log view
    void statusMessage(const QString &text, int timeoutMs);

private:
    QWidget *createLogPane();
    QWidget *createFindingsPane();
    QWidget *createDetailsPane();
    void onTextChanged();
    void onFinished(quint64 job, const Diagnosis &diagnosis);
    void onFailed(quint64 job, const QString &error);
    void onCancelled(quint64 job);
    void onProgress(quint64 job, qint64 done, qint64 total);
    void setBusy(bool busy, bool showProgressNow);
    void showFinding(int row);
    void updateCounts();
    void updateSourceLabel();
    void showError(const QString &text);
    void replaceText(const QString &text, bool readOnly);
    void loadNextChunk();
    void resumeLoading();
    static qsizetype chunkEnd(const QString &text, qsizetype from);

    DiagnosisRunner *m_runner;
    FindingsModel *m_findingsModel;
    EvidenceModel *m_evidenceModel;
    TargetFieldsModel *m_targetModel;

    Banner *m_summaryBanner = nullptr;
    Banner *m_errorBanner = nullptr;
    Banner *m_noteBanner = nullptr;
    QSplitter *m_mainSplitter = nullptr;
    QSplitter *m_rightSplitter = nullptr;
    QSplitter *m_detailsSplitter = nullptr;
    LogEdit *m_logEdit = nullptr;
    QLabel *m_sourceLabel = nullptr;
    QProgressBar *m_progress = nullptr;
    QPushButton *m_cancelButton = nullptr;
    QPushButton *m_diagnoseButton = nullptr;
    QLabel *m_countLabels[3] = {};
    QLabel *m_countIcons[3] = {};
    QTreeView *m_findingsView = nullptr;
    QLabel *m_detailsTitle = nullptr;
    QTextBrowser *m_details = nullptr;
    QTableView *m_targetView = nullptr;
    QLabel *m_targetHeader = nullptr;
    QTableView *m_evidenceView = nullptr;
    QLabel *m_evidenceHeader = nullptr;
    QAction *m_diagnoseAction = nullptr;
    QAction *m_copyFindingAction = nullptr;
    QAction *m_copyDiagnosisAction = nullptr;

    QTimer m_debounce;
    QTimer m_showProgressDelay;
    QTimer m_loadTimer;
    QString m_pendingText; // the rest of a text being loaded by chunks
    qsizetype m_pendingPos = 0;
    bool m_pendingReadOnly = false;
    QElapsedTimer m_jobClock;
    bool m_settingText = false;
    bool m_preview = false;
    bool m_demo = false;
    bool m_hasResult = false;
    QString m_filePath;
    QByteArray m_rawText; // what setLogText was given, when the editor shows a cleaned version
    qint64 m_fileSize = 0;
    qint64 m_jobBytes = 0;
    QString m_hostLabel;
    std::optional<HostProbe> m_hostProbe;
    bool m_openingFetched = false;
};

} // namespace moetune
