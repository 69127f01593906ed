// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/moe/configfile.h"
#include "core/run/workspace.h"

#include <QFutureWatcher>
#include <QList>
#include <QWidget>

#include <memory>
#include <optional>

namespace Ui {
class ResultsPage;
}

namespace moetune {

class ChosenConfigModel;
class CompareModel;
class LandscapeChart;
class LatencyChart;
class SpeedupChart;
class ServingResultsView;
class FleetResultsView;

// The Results page: a workspace of tuning runs (or one run folder), its tuned-vs-default chart and
// table, the landscape of one batch size, a comparison with other config files, and the PDF export.
// Workspaces are read on a worker; a newer open drops the result of an older one. Errors are shown
// inline above the tabs.
class ResultsPage : public QWidget {
    Q_OBJECT
public:
    explicit ResultsPage(QWidget *parent = nullptr);
    ~ResultsPage() override;

    // Opens a workspace or run folder (asynchronously; workspaceShown() when its charts are shown).
    void openWorkspace(const QString &path);
    void openDemo();
    // First start: the last workspace opened, else the demo workspace (a real recorded H200 sweep).
    void openInitial();
    void showRun(const QString &runId);
    // Writes the PDF report of the shown run to path, the name chosen (a simulated run's report says so on
    // every page); returns it, or an empty string with the reason shown inline.
    QString exportReport(const QString &path);
    // Adds a local config file to the compare choices and selects it; false with the reason inline.
    bool compareWithFile(const QString &path);
    // The Fleet tab (shown while the workspace holds a fleet record): the newest fleet record of
    // workspacePath, read again (the Fleet view saved one).
    void showFleetRecords(const QString &workspacePath);
    FleetResultsView *fleetView() const { return m_fleet; }

    bool isLoading() const;
    const Workspace *workspace() const { return m_workspace ? &*m_workspace : nullptr; }
    const WorkspaceRun *currentRun() const;
    QString message() const;
    static QString emptyText(); // what to do while no run is there to show

Q_SIGNALS:
    void workspaceShown(const QString &path);
    void openFailed(const QString &error);
    void statusMessage(const QString &text, int timeoutMs);
    // "Push to Host": the shown run and the host it ran on (run.json "host"), for the Tune page.
    void pushRequested(const QString &host, const QString &runId);

private:
    struct Loaded {
        int job = 0;
        QString path;
        std::optional<Workspace> workspace;
        QString error;
    };
    struct CompareSource {
        QString label;
        ConfigFile file;
        bool down = false; // compares against the down GEMM's winners
    };

    void loaded(Loaded l);
    void showMessage(const QString &text, bool error);
    void refreshLandscape();
    void rebuildCompareSources();
    void refreshCompare();
    void chooseExport();
    void chooseOpen();
    void chooseCompareFile();

    std::unique_ptr<Ui::ResultsPage> m_ui;
    LatencyChart *m_latency;
    SpeedupChart *m_speedup = nullptr;
    LandscapeChart *m_landscape;
    ChosenConfigModel *m_configModel;
    CompareModel *m_compareModel;
    ServingResultsView *m_serving = nullptr;
    FleetResultsView *m_fleet = nullptr;
    int m_job = 0;
    int m_pending = 0;
    std::optional<Workspace> m_workspace;
    int m_run = -1;
    QList<CompareSource> m_sources;
    QList<CompareSource> m_localSources;
};

} // namespace moetune
