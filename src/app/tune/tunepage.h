#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/tuning/tuningtarget.h"
#include "core/tuning/hostprobe.h"
#include "core/tuning/runprogress.h"
#include "core/tuning/tunespec.h"
#include "remote/hostsession.h"
#include "remote/pushflow.h"

#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>

namespace Ui {
class TunePage;
}

namespace moetune {

class HostCalls;
class LiveBestChart;
class ServerControl;
class TuneBestModel;
class TuneFlow;

// The Tune page: a job filled from a finding ("Tune this"), a host's probe or by hand, every field
// validated with a sentence and the file names a server would read previewed live; preflight (GPUs,
// holders, stop through the server profile on a click); start a detached run and follow it (progress,
// per-GPU counts, best so far per batch size next to the default, the live chart); cancel; reattach
// to runs on the host (those started from the CLI too); push preview, push, restart and prove, undo.
// It drives the flows of src/remote (TuneFlow, ServerControl, PushFlow) over its own HostSession.
class TunePage : public QWidget {
    Q_OBJECT
public:
    explicit TunePage(QWidget *parent = nullptr);
    ~TunePage() override;

    // Tests and the app: how HostSessions of this page find ssh files and the agent.
    void setEnvironment(const HostSession::Environment &env) { m_env = env; }
    void setHosts(const QList<HostConfig> &hosts);
    // From a finding on the Diagnose page: the target and the host the log came from ("" = choose).
    void tuneTarget(const QString &hostAlias, const TuningTarget &target, const Diagnosis &diagnosis);
    // From a host overview ("Tune the served model") or by hand.
    void tuneSpec(const QString &hostAlias, const TuneSpec &spec);

    TuneSpec spec() const;      // as the form says now
    QString validation() const; // the sentences shown, "" when the job is runnable
    const RunProgress &progress() const { return m_progress; }
    TuneBestModel *bestModel() const { return m_bestModel; }
    LiveBestChart *liveChart() const { return m_chart; }
    // Feeds one run event (the flows do this; the benchmark feeds synthetic ones).
    void applyRunEvent(const QJsonObject &event);

signals:
    void runFinished(const QString &runId, const QString &status);

private:
    void setupForm();
    void updateChecks();
    void ensureSession();
    void appendOutput(const QString &line);
    void setBusy(const QString &what);
    void refreshView();
    void onPreflight();
    void onStopServer();
    void onStart();
    void onAttach(const QString &runId);
    void onCancel();
    void onRefreshRuns();
    void onPreviewPush();
    void onPush();
    void onRestart();
    void onUndo();

    std::unique_ptr<Ui::TunePage> m_ui;
    HostSession::Environment m_env;
    QList<HostConfig> m_hosts;
    QPointer<HostSession> m_session;
    QPointer<HostCalls> m_calls;
    QPointer<TuneFlow> m_tune;
    QPointer<ServerControl> m_server;
    QPointer<PushFlow> m_push;
    std::optional<TuningTarget> m_target;
    std::optional<Diagnosis> m_before;
    std::optional<HostProbe> m_probe;
    std::optional<PushFlow::Preview> m_preview;
    QStringList m_pushedTargets;
    RunProgress m_progress;
    TuneBestModel *m_bestModel;
    LiveBestChart *m_chart;
    bool m_viewDirty = false;
    QString m_runId;
};

} // namespace moetune
