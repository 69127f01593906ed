// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QIcon>
#include <QMainWindow>
#include <QSize>
#include <QStringList>

class QListWidget;
class QMenu;
class QStackedWidget;

namespace moetune {

class DiagnosePage;
class HostRegistry;
class HostsPage;
class TunePage;
struct TuningTarget;

// The application window: a navigation list of task pages on the left, the current page on the right.
// It owns the host registry (hosts and their connections) and hands it to the pages; the pages do not
// know each other, and every action that crosses pages is a signal connected here.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    static constexpr int maxRecentFiles = 10;
    // The smallest window the pages are laid out for (nothing important cut off down to it).
    static constexpr QSize minimumWindowSize{1024, 640};

    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Later tasks (Hosts, Tune, Results) plug in here; returns the page's index.
    int addPage(QWidget *page, const QIcon &icon, const QString &title);
    void setCurrentPage(int index);
    int currentPage() const;
    int pageCount() const;

    HostRegistry *hostRegistry() const { return m_hosts; }
    QMenu *fileMenu() const { return m_fileMenu; }
    QMenu *editMenu() const { return m_editMenu; }
    QMenu *helpMenu() const { return m_helpMenu; }
    // The page shown for index (navigation order); nullptr when out of range.
    QWidget *page(int index) const;

    // What the app shows at start: the given log, or else the demo.
    void openInitial(const QString &logPath);
    void openLogDialog();
    QStringList recentFiles() const;
    void addRecentFile(const QString &path);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void createMenus();
    void rebuildRecentMenu();
    void restoreSettings();
    void saveSettings() const;
    void showAbout();
    void showDiagnosePage();
    void tuneTarget(const QString &hostAlias, const TuningTarget &target);
    // Hosts' "Tune the Served Model": the target of the host's diagnosis that its server serves, through
    // tuneTarget() as "Tune This..." (one job builder); diagnosed = the host's log was just diagnosed.
    void tuneServedModel(const QString &alias, bool diagnosed);
    void updatePageShortcuts();
    // A pasted log: which host tunes it (or none yet); then the headroom check when asked for.
    void askTuneHost(const TuningTarget &target, bool thenHeadroom = false);

    QListWidget *m_navigation;
    QStackedWidget *m_stack;
    HostRegistry *m_hosts;
    DiagnosePage *m_diagnosePage;
    HostsPage *m_hostsPage;
    TunePage *m_tunePage;
    QList<QAction *> m_pageShortcuts;
    QMenu *m_fileMenu = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_editMenu = nullptr;
    QMenu *m_helpMenu = nullptr;
    QString m_tuneServedAfterDiagnosis; // "Tune the Served Model" waits for this host's diagnosis
    bool m_quitConfirmed = false;       // the user said quit while a run was followed
};

} // namespace moetune
