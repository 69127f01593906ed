// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/fleet/fleetrecord.h"

#include <QWidget>

#include <optional>

class QLabel;
class QPushButton;
class QTextBrowser;

namespace moetune {

// The Results page's Fleet tab: the newest fleet record of the workspace as the fleet report shows it
// (per group the hosts, the tuning run, each host's outcome, totals), and "Export Fleet Report (PDF)",
// which reads the record again so the PDF says what the workspace holds at that moment. Records are
// read off the GUI thread.
class FleetResultsView : public QWidget {
    Q_OBJECT
public:
    explicit FleetResultsView(QWidget *parent = nullptr);
    ~FleetResultsView() override;

    // Reads the workspace's fleet records (asynchronously; shown() when done, with or without one).
    void setWorkspace(const QString &path);
    void reload() { setWorkspace(m_workspace); }
    bool isLoading() const { return m_pending > 0; }
    const FleetRecord *record() const { return m_record ? &*m_record : nullptr; }
    QString html() const;
    // Writes the fleet PDF of the shown record (read again from the workspace) to path; returns the path
    // written or "" with the reason in message().
    QString exportReport(const QString &path);
    QString message() const;

signals:
    void shown(bool hasRecord);
    void statusMessage(const QString &text, int timeoutMs);

private:
    void chooseExport();

    QString m_workspace;
    int m_job = 0;
    int m_pending = 0;
    std::optional<FleetRecord> m_record;
    QLabel *m_title;
    QPushButton *m_export;
    QLabel *m_message;
    QTextBrowser *m_browser;
};

} // namespace moetune
