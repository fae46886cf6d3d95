SELECT * FROM clinic.main.doctor_workload ORDER BY doctor_id;
