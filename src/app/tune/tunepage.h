// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"
#include "core/host/hostprobe.h"
#include "core/job/tunespec.h"
#include "core/job/tuningtarget.h"
#include "core/run/runprogress.h"
#include "remote/flows/pushflow.h"

#include <QHash>
#include <QJsonObject>
#include <QPointer>
#include <QWidget>

#include <memory>
#include <optional>
#include <utility>

namespace Ui {
class TunePage;
}

namespace moetune {

class Banner;
class HeadroomBox;
class HostCalls;
class HostRegistry;
class HostFlows;
class HostSession;
class LiveBestChart;
class ServerControl;
class ServingBenchBox;
class TuneBestModel;
class TuneFlow;
class TuneJobForm;
class TuneLiveView;
class TunePushPanel;
class TuneRunFolder;

// The Tune page: a job filled from a finding ("Tune this"), a host's probe ("Tune the served model")
// or by hand, every field validated with a sentence and the file names a server would read previewed
// live; preflight (GPUs, holders, stop through the server profile on a click); start a detached run and
// follow it (progress, per-GPU counts, best so far per batch size next to the default, the live chart);
// cancel; reattach to runs on the host (those started from the CLI too); push preview (target folder,
// diff, survival warnings), push with backup, restart and prove, undo. It drives the flows of
// src/remote that the registry's connection of the chosen host owns (HostSession::flows()):
// the Hosts page asks for host keys and secrets of every connection, so the page never logs in itself.
// A container (ui/tunepage.ui) of sub-views that each show one part: TuneJobForm (the job and its
// checks), HeadroomBox, TuneLiveView (the Run tab), TunePushPanel (the Push and proof tab, with the
// ServingBenchBox); TuneRunFolder keeps the run locally. The page builds no flow: it takes the session's.
class TunePage : public QWidget {
    Q_OBJECT
public:
    explicit TunePage(HostRegistry *registry, QWidget *parent = nullptr);
    ~TunePage() override;

    // From a finding on the Diagnose page: the target and the host the log came from ("" = keep the
    // host chosen), with the diagnosis it came from (the "before" of the proof).
    // logOfHost false: a pasted log, hostAlias the host the user chose to tune on ("" = none yet).
    void tuneTarget(const QString &hostAlias, const TuningTarget &target, const Diagnosis &diagnosis,
                    bool logOfHost = true);
    // From a host overview ("Tune the served model") or by hand.
    void tuneSpec(const QString &hostAlias, const TuneSpec &spec);
    // Chooses a finished run on a host for push (and follows it when it is still running).
    void openRun(const QString &hostAlias, const QString &runId);

    // "Check headroom" (the box before Start tuning, or the Diagnose page's finding through MainWindow):
    // the agent's headroom check of the job as the form says now, on the chosen host.
    void checkHeadroom();
    HeadroomBox *headroomBox() const;

    QString hostAlias() const;  // the host chosen
    TuneSpec spec() const;      // as the form says now
    QString validation() const; // the sentences shown, "" when the job is runnable
    const RunProgress &progress() const { return m_progress; }
    TuneBestModel *bestModel() const;
    LiveBestChart *liveChart() const;
    ServingBenchBox *servingBox() const; // the push tab's serving benchmark
    // Feeds one run event (the flows do this; the benchmark feeds synthetic ones).
    void applyRunEvent(const QJsonObject &event);
    // Where followed runs are kept locally (a workspace: a folder per run, reopened by the Results
    // page); Workspace::defaultLocation() unless set (tests).
    void setWorkspacePath(const QString &path);
    QString workspacePath() const;
    QString runFolder() const; // the local folder of the run shown ("" = none)
    bool isFollowing() const { return m_following; }
    QString followedRun() const { return m_following ? m_runId : QString(); }
    // Runs kept in the workspace that moetune stopped following before they ended (it was closed): a
    // banner offers to follow the newest again on its host. Returns how many were found.
    int offerUnfinishedRuns();
    QString unfinishedRunsText() const; // what the banner says ("" = none)

signals:
    void runFinished(const QString &runId, const QString &status);
    void pushed(const QString &runId, const QString &error); // after Push ("" = installed)
    void proved(const QString &runId, bool warningGone);     // after Restart and prove
    void undone(const QString &runId, const QString &error); // after Undo push
    void previewReady(const QString &runId, const QString &error);
    void statusMessage(const QString &text, int timeoutMs);
    // "Show in Results": the local workspace holding the run, for the Results page.
    void showResultsRequested(const QString &workspacePath, const QString &runId);
    // The kept copy of a run changed (begun, finished, pushed, proved): the Results page follows it.
    void keptRunChanged(const QString &workspacePath, const QString &runId);

private:
    void updateChecks();
    void updateProfileLine();
    // The registry's connection of the chosen host and its flows (the session makes them again when its
    // agent changed and nothing runs on them; a followed run keeps its own until it ends).
    bool ensureFlows();
    void dropFlows();
    void useFlows(HostFlows *flows); // the bundle the page shows (nullptr: none), its signals connected
    // A flow's callback as the page's: dropped once the page is gone or uses other flows (the session
    // owns them; they may outlive the page, and a callback of the host the page left is not its).
    template <typename F>
    auto guarded(F f) {
        return [self = QPointer<TunePage>(this), flows = m_flows.data(), f = std::move(f)](auto &&...args) {
            if (self && flows && self->m_flows.data() == flows)
                f(std::forward<decltype(args)>(args)...);
        };
    }
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
    void onEditProfile();
    QString chosenRun() const;
    void beginRunFolder(const QString &runId);
    void fillFormFromRun(const QString &runId); // the job of a run listed on the host (Attach)
    QString aliasOfHost(const QString &shown) const;
    void recordPush(const QString &runId, const PushRecord &r, const QString &folder);
    void setupServingBox();

    std::unique_ptr<Ui::TunePage> m_ui;
    TuneJobForm *m_form;
    TuneLiveView *m_live;
    TunePushPanel *m_pushPanel;
    TuneRunFolder *m_runFolder;
    HostRegistry *m_registry;
    QPointer<HostSession> m_session;
    QPointer<HostFlows> m_flows; // the session's flows (remote/hostflows.h); the pointers below are its
    QList<QMetaObject::Connection> m_flowConnections; // the page's connections to m_flows and its session
    QPointer<HostCalls> m_calls;
    QPointer<TuneFlow> m_tune;
    QPointer<ServerControl> m_server;
    QPointer<PushFlow> m_push;
    std::optional<TuningTarget> m_target;
    QString m_runDeviceName; // the GPU name of the job the form was filled from (a run's or a probe's)
    std::optional<Diagnosis> m_before;
    std::optional<HostProbe> m_probe;
    std::optional<PushFlow::Preview> m_preview;
    QStringList m_pushedTargets;
    RunProgress m_progress;
    bool m_viewDirty = false;
    bool m_following = false;
    bool m_serverStopped = false;   // stopped by Stop server and not started since
    QString m_preflightNote;        // what the last stop said, shown with the preflight after it
    QJsonObject m_preflightBlocked; // {host, spec} that Check GPUs said cannot start ({} = none)
    QString m_runId;
    QString m_pendingRun;                   // openRun() before the runs were listed
    QHash<QString, QJsonObject> m_runSpecs; // run id -> its spec, as the host listed it
    Banner *m_resumeBanner = nullptr;
};

} // namespace moetune
