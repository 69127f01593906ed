// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnoser.h"
#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"

#include <QDateTime>

#include <QElapsedTimer>
#include <QTimer>
#include <QWidget>

#include <memory>
#include <optional>

class QAction;

namespace Ui {
class DiagnosePage;
}

namespace moetune {

class DiagnoseLogPane;
class FindingDetailsPane;
class FindingsModel;
class FindingsPane;
class JobRunner;
class LogLineIndex;
struct TuningTarget;

// Paste or open a server log, see what it says about the MoE kernel configs, and what to do. Knows no
// other page: a log from a host arrives through openFetchedLog / beginFollow (MainWindow connects the
// Hosts page), and "Tune this" leaves as tuneRequested. A container (ui/diagnosepage.ui) of the banners
// and three sub-views: DiagnoseLogPane (the log, its find bar and the diagnosis' progress), FindingsPane
// (the counts as filters and the list) and FindingDetailsPane (what to do, the target, the evidence);
// the page owns the input, the diagnosis jobs and the actions.
class DiagnosePage : public QWidget {
    Q_OBJECT
public:
    // Files above this are diagnosed from disk and only previewed (read-only) in the log view.
    static constexpr qint64 previewBytes = qint64{4} * 1024 * 1024;
    // Text above this shows the progress bar at once (smaller jobs show it only if they take a while).
    static constexpr qint64 bigTextBytes = qint64{10} * 1024 * 1024;
    // Followed lines are diagnosed this long after the last batch.
    static constexpr int followDebounceMs = 400;

    explicit DiagnosePage(QWidget *parent = nullptr);
    ~DiagnosePage() override;

    // Loads a log file: small ones whole, big ones as a preview; diagnoses it on a worker.
    // false (and an inline error) when it cannot be read; what was shown stays.
    bool openFile(const QString &path);
    // The new log (a paste): replaces what is shown and diagnoses it at once.
    void setLogText(const QString &text);
    // A paste into the log view: an empty one keeps the log shown and says so; any other replaces it,
    // and Undo (undoAction) brings the log and diagnosis it replaced back.
    void pasteText(const QString &text);
    // Restores the log and diagnosis that the last paste replaced; false when there is none.
    bool undoPaste();
    // True while a big text is still going into the log view.
    bool isLoading() const;
    // The bundled demo log, diagnosed.
    bool loadDemo();
    // A log fetched from a host (alias; label: the name shown): opened like openFile() and diagnosed
    // with the host's probe merged; the diagnosis carries the alias.
    bool openFetchedLog(const QString &path, const QString &hostAlias, const QString &hostLabel,
                        const HostProbe &probe);
    // A host's log with its diagnosis made by the host session's Diagnose host flow (the probe merged):
    // shown as is, not diagnosed again.
    bool openHostDiagnosis(const QString &path, const QString &hostAlias, const QString &hostLabel,
                           const HostProbe &probe, const Diagnosis &diagnosis);
    const Diagnoser &diagnoser() const { return m_diagnoser; }
    // Follow Live of a host: the log view is emptied and shows the lines as they come.
    void beginFollow(const QString &hostAlias, const QString &hostLabel,
                     const std::optional<HostProbe> &probe);
    void appendFollowedLines(const QString &hostAlias, const QStringList &lines);
    void endFollow(const QString &hostAlias, const QString &error);
    bool isFollowing() const { return m_following; }
    // New facts of a host (a probe finished): merged from the next diagnosis on if its log is shown.
    void updateHostProbe(const QString &hostAlias, const HostProbe &probe);
    QString hostAlias() const { return m_hostAlias; }
    QString hostLabel() const { return m_hostLabel; }

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
    // The findings shown are not of the log shown (another log is being diagnosed, or that was cancelled).
    bool resultsAreStale() const;
    // Rows of the diagnosis' findings (not of the filtered list).
    int currentFindingRow() const;
    void selectFinding(int row);
    // Next (+1) / previous (-1) finding of the filtered list, wrapping.
    void selectAdjacentFinding(int step);
    // Shows line (1-based, logical log) in the log view from its start with the match highlighted;
    // false when it is not in the loaded text.
    bool showLogLine(qint64 line, const QString &expectedText = {});
    void showFindBar();
    // The finding's target, handed to whoever tunes (MainWindow: the Tune page).
    void requestTune();

    QAction *diagnoseAction() const { return m_diagnoseAction; }
    QAction *copyFindingAction() const { return m_copyFindingAction; }
    QAction *copyDiagnosisAction() const { return m_copyDiagnosisAction; }
    QAction *nextFindingAction() const { return m_nextFindingAction; }
    QAction *previousFindingAction() const { return m_previousFindingAction; }
    QAction *findAction() const { return m_findAction; }
    QAction *undoAction() const { return m_undoAction; }

    QByteArray saveState() const;
    void restoreState(const QByteArray &state);

signals:
    void fileOpened(const QString &path);
    void diagnosisFinished();
    void logLoaded();       // a text loaded by chunks is complete in the log view
    void logWindowLoaded(); // a big file's window around a line is in the log view
    void statusMessage(const QString &text, int timeoutMs);
    // "Tune this": the target of the selected finding, on the host its log came from ("" = none known).
    void tuneRequested(const QString &hostAlias, const moetune::TuningTarget &target);
    // "Check headroom": the same target, for the Tune page's headroom check (MainWindow wires it).
    void headroomRequested(const QString &hostAlias, const moetune::TuningTarget &target);
    // The Stop of the follow banner: MainWindow tells the Hosts page.
    void stopFollowRequested(const QString &hostAlias);

private:
    struct Result {
        Diagnosis diagnosis;
        QString error;
        bool merged = false; // the host's probe is in already
    };
    bool openFileFrom(const QString &path, const QString &hostAlias, const QString &hostLabel,
                      const std::optional<HostProbe> &probe, const Diagnosis *ready = nullptr);
    void holdRestBriefly();
    void setupViews();
    void setupActions();
    // A new input replaces the log: banners of the old one go, the findings become stale.
    void beginInput(const QString &hostAlias = {}, const QString &hostLabel = {},
                    const std::optional<HostProbe> &probe = std::nullopt);
    void startJob(const QString &path, const QByteArray &text, bool showProgressNow);
    void onResult(const Result &result);
    void onCancelled();
    void onProgress(qint64 done, qint64 total);
    void setBusy(bool busy, bool showProgressNow);
    void showFinding(int row);
    void showContextMenu(QWidget *view, const QPoint &pos);
    void updateCounts();
    void updateSourceLabel();
    void updateStale();
    void updateFollowBanner();
    void updateFindingLines();
    void showError(const QString &text);
    void loadWindowAround(qint64 line, const QString &expectedText);
    static QString inUseText(const TuningTarget &target);
    QString tuneSpecText(const TuningTarget &target) const;
    QString sourceText() const;

    // What a paste replaced, for Edit > Undo.
    struct Replaced {
        QByteArray rawText;
        QString filePath;
        QString hostAlias;
        QString hostLabel;
        std::optional<HostProbe> probe;
        Diagnosis diagnosis;
        bool demo = false;
    };
    std::optional<Replaced> m_replaced;

    std::unique_ptr<Ui::DiagnosePage> m_ui;
    JobRunner *m_jobs;
    Diagnoser m_diagnoser;
    FindingsModel *m_findingsModel;
    DiagnoseLogPane *m_log;
    FindingsPane *m_findings;
    FindingDetailsPane *m_details;

    QAction *m_diagnoseAction = nullptr;
    QAction *m_copyFindingAction = nullptr;
    QAction *m_copyDiagnosisAction = nullptr;
    QAction *m_nextFindingAction = nullptr;
    QAction *m_previousFindingAction = nullptr;
    QAction *m_findAction = nullptr;
    QAction *m_undoAction = nullptr;

    QTimer m_debounce;
    QTimer m_showProgressDelay;
    QElapsedTimer m_jobClock;
    bool m_preview = false;
    bool m_demo = false;
    bool m_hasResult = false;
    QString m_filePath;
    QByteArray m_rawText; // the log as given (colour codes and all); the view shows it cleaned
    qint64 m_fileSize = 0;
    // Which input the findings belong to: every new input counts up; a job remembers its input.
    quint64 m_inputSerial = 0;
    quint64 m_jobSerial = 0;
    quint64 m_resultSerial = 0;
    QString m_resultSource; // the source label of the log the findings are of
    QString m_jobSource;
    QString m_jobHost;
    QString m_hostAlias;
    QString m_hostLabel;
    // When the host's log shown was fetched (its file's time; invalid = not a fetched log): the status after
    // diagnosing keeps its age (a reopened log may be days old). Pending: set by openFetchedLog for
    // beginInput, which clears the shown one for every other input.
    QDateTime m_fetchedAt;
    QDateTime m_pendingFetchedAt;
    std::optional<HostProbe> m_hostProbe;
    bool m_following = false;
    qint64 m_followedLines = 0;
    // A big file: the view holds a window of it; another window is read around a line it lacks.
    std::shared_ptr<LogLineIndex> m_lineIndex;
    JobRunner *m_windowJobs;
};

} // namespace moetune
