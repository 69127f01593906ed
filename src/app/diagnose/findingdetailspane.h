// SPDX-FileCopyrightText: 2026 The moetune authors
// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "core/diagnosis/diagnosis.h"

#include <QWidget>

#include <memory>

class QTableView;

namespace Ui {
class FindingDetailsPane;
}

namespace moetune {

class EvidenceModel;
class TargetFieldsModel;

// The Diagnose page's details of one finding (ui/findingdetailspane.ui): what to do first, then why;
// its tuning target field by field with Tune This and Check headroom, the next step as one sentence,
// and its evidence lines (a click shows the line in the log: evidenceClicked).
class FindingDetailsPane : public QWidget {
    Q_OBJECT
public:
    explicit FindingDetailsPane(QWidget *parent = nullptr);
    ~FindingDetailsPane() override;

    // f: nullptr = none (hasResult: a diagnosis is shown, so the hint is to select one); hostLabel:
    // the host the log came from ("" = none); nextStep: the tune sentence of a tunable target.
    void showFinding(const Finding *f, bool hasResult, const QString &hostLabel, const QString &nextStep);
    void setCopyEnabled(bool enabled);
    QTableView *targetView() const;
    QTableView *evidenceView() const;
    EvidenceModel *evidenceModel() const { return m_evidenceModel; }
    TargetFieldsModel *targetModel() const { return m_targetModel; }

signals:
    void evidenceClicked(const moetune::Evidence &evidence);
    void tuneClicked();
    void headroomClicked();
    void copyClicked();

private:
    std::unique_ptr<Ui::FindingDetailsPane> m_ui;
    EvidenceModel *m_evidenceModel;
    TargetFieldsModel *m_targetModel;
    QString m_shownFindingId; // the details scroll back to the top when another finding is shown
};

} // namespace moetune
