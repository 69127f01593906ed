#pragma once

#include <QIcon>
#include <QMainWindow>
#include <QStringList>

class QListWidget;
class QMenu;
class QStackedWidget;

namespace moetune {

class DiagnosePage;

// The application window: a navigation list of task pages on the left, the current page on the right.
class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    static constexpr int maxRecentFiles = 10;

    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    // Later tasks (Hosts, Tune, Results) plug in here; returns the page's index.
    int addPage(QWidget *page, const QIcon &icon, const QString &title);
    void setCurrentPage(int index);
    int currentPage() const;
    int pageCount() const;

    DiagnosePage *diagnosePage() const { return m_diagnosePage; }
    QListWidget *navigation() const { return m_navigation; }
    QMenu *fileMenu() const { return m_fileMenu; }
    QMenu *editMenu() const { return m_editMenu; }
    QMenu *helpMenu() const { return m_helpMenu; }

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

    QListWidget *m_navigation;
    QStackedWidget *m_stack;
    DiagnosePage *m_diagnosePage;
    QMenu *m_fileMenu = nullptr;
    QMenu *m_recentMenu = nullptr;
    QMenu *m_editMenu = nullptr;
    QMenu *m_helpMenu = nullptr;
};

} // namespace moetune
