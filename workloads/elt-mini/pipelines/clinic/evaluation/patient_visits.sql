SELECT * FROM clinic.main.patient_visits ORDER BY patient_id;
